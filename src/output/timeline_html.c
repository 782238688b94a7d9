/*
 * timeline_html.c - a ks_timeline as one self-contained HTML page: the data
 * as JSON (written with json.h) in a <script type="application/json"> and
 * kvmscope's own small canvas viewer in inline JavaScript.  No network, no
 * external files: open it with any browser.
 *
 * Rows: per VM and vCPU a state row and a guest-task row (guest events as
 * ticks on it), then one row per host CPU.  Wheel zooms, dragging pans,
 * hovering shows the interval under the pointer.
 */
#include <stdio.h>
#include <string.h>

#include "kvmscope/json.h"
#include "kvmscope/timeline.h"

/* Strings go inside a <script> element: keep '<' and '>' out of them. */
static void safe_string(struct ks_json *j, const char *s)
{
	char buf[256];
	size_t i;

	for (i = 0; s[i] && i < sizeof(buf) - 1; i++)
		buf[i] = (s[i] == '<' || s[i] == '>' || s[i] == '&') ? '?' : s[i];
	buf[i] = 0;
	ks_json_string(j, buf);
}

static void string_array(struct ks_json *j, const char *key, char *const *arr, uint32_t n)
{
	uint32_t i;

	ks_json_key(j, key);
	ks_json_begin_array(j);
	for (i = 0; i < n; i++)
		safe_string(j, arr[i]);
	ks_json_end_array(j);
}

static void write_rows(struct ks_json *j, const struct ks_timeline *tl, int32_t max_cpu)
{
	char label[200];
	uint32_t i;
	int32_t c;

	ks_json_key(j, "rows");
	ks_json_begin_array(j);
	for (i = 0; i < tl->nr_vcpus; i++) {
		const struct ks_tl_vcpu *v = &tl->vcpus[i];
		snprintf(label, sizeof(label), "%s vCPU %u", tl->vms[v->vm].name, v->vcpu_id);
		safe_string(j, label);
		snprintf(label, sizeof(label), "  guest tasks (vCPU %u)", v->vcpu_id);
		safe_string(j, label);
	}
	for (c = 0; c <= max_cpu; c++) {
		snprintf(label, sizeof(label), "host CPU %d", c);
		safe_string(j, label);
	}
	ks_json_end_array(j);
}

static void write_data(const struct ks_timeline *tl, FILE *out)
{
	struct ks_json j;
	char *state_names[KS_VS_COUNT];
	int32_t max_cpu = -1;
	uint64_t i;
	int s;

	for (i = 0; i < tl->nr_cpu; i++)
		if (tl->cpu[i].cpu > max_cpu && tl->cpu[i].cpu < 4096)
			max_cpu = tl->cpu[i].cpu;
	for (s = 0; s < KS_VS_COUNT; s++)
		state_names[s] = (char *)ks_vstate_name((enum ks_vstate)s);
	ks_json_init(&j, out, false);
	ks_json_begin_object(&j);
	ks_json_kv_u64(&j, "t0", tl->first_ts);
	ks_json_kv_u64(&j, "span", tl->last_ts - tl->first_ts);
	write_rows(&j, tl, max_cpu);
	string_array(&j, "states", state_names, KS_VS_COUNT);
	string_array(&j, "reasons", tl->reasons, tl->nr_reasons);
	string_array(&j, "names", tl->names, tl->nr_names);
	/* flat arrays of [row, start, end, kind, label] in ns from t0 */
	ks_json_key(&j, "iv");
	ks_json_begin_array(&j);
	for (i = 0; i < tl->nr_iv; i++) {
		const struct ks_tl_interval *v = &tl->iv[i];
		ks_json_u64(&j, 2 * (uint64_t)v->vcpu);
		ks_json_u64(&j, v->start - tl->first_ts);
		ks_json_u64(&j, v->end - tl->first_ts);
		ks_json_u64(&j, v->state);
		ks_json_u64(&j, v->reason);
	}
	for (i = 0; i < tl->nr_gtasks; i++) {
		const struct ks_tl_guest_item *g = &tl->gtasks[i];
		ks_json_u64(&j, 2 * (uint64_t)g->vcpu + 1);
		ks_json_u64(&j, g->start - tl->first_ts);
		ks_json_u64(&j, g->end - tl->first_ts);
		ks_json_u64(&j, 100);
		ks_json_u64(&j, g->name);
	}
	for (i = 0; i < tl->nr_cpu; i++) {
		const struct ks_tl_cpu_slice *c = &tl->cpu[i];
		if (c->cpu < 0 || c->cpu > max_cpu)
			continue;
		ks_json_u64(&j, 2 * (uint64_t)tl->nr_vcpus + (uint64_t)c->cpu);
		ks_json_u64(&j, c->start - tl->first_ts);
		ks_json_u64(&j, c->end - tl->first_ts);
		ks_json_u64(&j, 200);
		ks_json_u64(&j, c->vcpu);
	}
	ks_json_end_array(&j);
	ks_json_key(&j, "ev");
	ks_json_begin_array(&j);
	for (i = 0; i < tl->nr_gevents; i++) {
		const struct ks_tl_guest_item *g = &tl->gevents[i];
		ks_json_u64(&j, 2 * (uint64_t)g->vcpu + 1);
		ks_json_u64(&j, g->start - tl->first_ts);
		ks_json_u64(&j, g->name);
	}
	ks_json_end_array(&j);
	ks_json_end_object(&j);
	ks_json_finish(&j);
}

static const char page_head[] =
"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
"<title>kvmscope timeline</title>\n<style>\n"
"body{margin:0;font:12px sans-serif;background:#fafafa;color:#222}\n"
"#top{padding:6px 10px;border-bottom:1px solid #ccc;background:#fff}\n"
"#legend span{display:inline-block;margin-right:12px}\n"
"#legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}\n"
"#tip{position:fixed;pointer-events:none;background:#ffffe0;border:1px solid #999;"
"padding:3px 6px;display:none;white-space:pre}\n"
"canvas{display:block}\n</style></head><body>\n"
"<div id=\"top\"><b>kvmscope timeline</b> <span id=\"info\"></span>"
" &mdash; wheel: zoom, drag: pan, double-click: reset<div id=\"legend\"></div></div>\n"
"<canvas id=\"c\"></canvas><div id=\"tip\"></div>\n"
"<script id=\"data\" type=\"application/json\">";

static const char page_tail[] =
"</script>\n<script>\n"
"'use strict';\n"
"const D=JSON.parse(document.getElementById('data').textContent);\n"
"const COL={RUNNING:'#2e9d3a',IDLE:'#a8d5a2',HOST:'#e6a117',HALTED:'#7f8fa6',"
"PREEMPTED:'#d9412b',BLOCKED:'#8e5cc2'};\n"
"const LABEL_W=260,ROW_H=22,AXIS_H=24;\n"
"const cv=document.getElementById('c'),cx=cv.getContext('2d');\n"
"const tip=document.getElementById('tip');\n"
"let v0=0,v1=Math.max(D.span,1);\n"
"function hue(n){let h=0;for(const ch of String(n))h=(h*31+ch.charCodeAt(0))%360;"
"return 'hsl('+h+',55%,60%)';}\n"
"function color(kind,lab){if(kind<100)return COL[D.states[kind]]||'#999';"
"if(kind==100)return /^swapper/.test(D.names[lab])?'#ddd':hue(D.names[lab]);"
"return hue('v'+lab);}\n"
"function text(kind,lab){if(kind<100){const r=D.reasons[lab];"
"return D.states[kind]+(r?' '+r:'');}"
"if(kind==100)return 'guest task '+D.names[lab];return 'vCPU row '+D.rows[2*lab];}\n"
"function fmt(ns){if(ns>=1e9)return (ns/1e9).toFixed(6)+' s';"
"if(ns>=1e6)return (ns/1e6).toFixed(3)+' ms';if(ns>=1e3)return (ns/1e3).toFixed(3)+' us';"
"return ns.toFixed(0)+' ns';}\n"
"function X(t){return LABEL_W+(t-v0)/(v1-v0)*(cv.width-LABEL_W-10);}\n"
"function draw(){\n"
" cv.width=window.innerWidth;cv.height=Math.max(window.innerHeight-60,AXIS_H+D.rows.length*ROW_H+10);\n"
" cx.fillStyle='#fff';cx.fillRect(0,0,cv.width,cv.height);\n"
" cx.font='12px sans-serif';cx.textBaseline='middle';\n"
" for(let r=0;r<D.rows.length;r++){const y=AXIS_H+r*ROW_H;"
"cx.fillStyle=r%2?'#f4f4f4':'#fff';cx.fillRect(0,y,cv.width,ROW_H);"
"cx.fillStyle='#222';cx.fillText(D.rows[r],6,y+ROW_H/2);}\n"
" const iv=D.iv;for(let i=0;i<iv.length;i+=5){const s=iv[i+1],e=iv[i+2];"
"if(e<v0||s>v1)continue;let x0=Math.max(X(s),LABEL_W),x1=Math.min(X(e),cv.width-10);"
"cx.fillStyle=color(iv[i+3],iv[i+4]);"
"cx.fillRect(x0,AXIS_H+iv[i]*ROW_H+3,Math.max(x1-x0,1),ROW_H-6);}\n"
" const ev=D.ev;cx.fillStyle='#000';for(let i=0;i<ev.length;i+=3){const t=ev[i+1];"
"if(t<v0||t>v1)continue;cx.fillRect(X(t),AXIS_H+ev[i]*ROW_H+ROW_H-6,1,5);}\n"
" cx.fillStyle='#fff';cx.fillRect(0,0,cv.width,AXIS_H);cx.strokeStyle='#888';"
"cx.beginPath();cx.moveTo(LABEL_W,AXIS_H-1);cx.lineTo(cv.width-10,AXIS_H-1);cx.stroke();\n"
" const span=v1-v0,step=Math.pow(10,Math.floor(Math.log10(span/8)));"
"let st=step;if(span/st>16)st*=5;else if(span/st>8)st*=2;\n"
" cx.fillStyle='#222';for(let t=Math.ceil(v0/st)*st;t<=v1;t+=st){const x=X(t);"
"cx.fillRect(x,AXIS_H-6,1,6);cx.fillText('+'+fmt(t),x+2,AXIS_H/2-2);}\n"
" cx.strokeStyle='#ccc';cx.beginPath();cx.moveTo(LABEL_W-1,AXIS_H);"
"cx.lineTo(LABEL_W-1,cv.height);cx.stroke();\n"
"}\n"
"function at(px,py){const r=Math.floor((py-AXIS_H)/ROW_H);"
"const t=v0+(px-LABEL_W)/(cv.width-LABEL_W-10)*(v1-v0);const iv=D.iv;"
"for(let i=0;i<iv.length;i+=5)if(iv[i]==r&&iv[i+1]<=t&&t<iv[i+2])return i;return -1;}\n"
"let drag=null;\n"
"cv.addEventListener('wheel',e=>{e.preventDefault();if(e.offsetX<LABEL_W)return;"
"const t=v0+(e.offsetX-LABEL_W)/(cv.width-LABEL_W-10)*(v1-v0);"
"const k=e.deltaY<0?0.8:1.25;v0=t-(t-v0)*k;v1=t+(v1-t)*k;"
"if(v1-v0<10)v1=v0+10;draw();},{passive:false});\n"
"cv.addEventListener('mousedown',e=>{drag={x:e.offsetX,a:v0,b:v1};});\n"
"window.addEventListener('mouseup',()=>{drag=null;});\n"
"cv.addEventListener('dblclick',()=>{v0=0;v1=Math.max(D.span,1);draw();});\n"
"cv.addEventListener('mousemove',e=>{if(drag){const d=(e.offsetX-drag.x)/"
"(cv.width-LABEL_W-10)*(drag.b-drag.a);v0=drag.a-d;v1=drag.b-d;draw();return;}"
"const i=at(e.offsetX,e.offsetY);if(i<0){tip.style.display='none';return;}"
"const iv=D.iv;tip.textContent=D.rows[iv[i]]+'\\n'+text(iv[i+3],iv[i+4])+'\\n'+"
"'from +'+fmt(iv[i+1])+' for '+fmt(iv[i+2]-iv[i+1]);"
"tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';"
"tip.style.display='block';});\n"
"window.addEventListener('resize',draw);\n"
"document.getElementById('info').textContent=D.rows.length+' rows, '+fmt(D.span)+"
"', '+(D.iv.length/5)+' intervals, '+(D.ev.length/3)+' guest events';\n"
"document.getElementById('legend').innerHTML=Object.keys(COL).map(k=>"
"'<span><i style=\"background:'+COL[k]+'\"></i>'+k+'</span>').join('')+"
"'<span>guest tasks: one colour per task, ticks: guest events</span>';\n"
"draw();\n"
"</script></body></html>\n";

void ks_timeline_write_html(const struct ks_timeline *tl, FILE *out)
{
	fputs(page_head, out);
	write_data(tl, out);
	fputs(page_tail, out);
}
