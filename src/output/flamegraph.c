/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * flamegraph.c - builds a frame tree from folded stacks and writes it as an
 * interactive SVG (flamegraph.h).  Written for kvmscope; the page layout
 * (root at the bottom, one 16-pixel row per depth, kernel frames "_[k]"
 * in orange) follows the usual flame graph conventions; guest user frames
 * are green, host frames ("_[h]") teal, with a legend.  The SVG is written
 * 1200 px wide and its script stretches it to the window's width.
 */
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph.h"
#include "util/hashmap.h"

#define FG_WIDTH 1200
#define FG_ROW 16
#define FG_PAD_TOP 56
#define FG_PAD_BOTTOM 30
#define FG_PAD_SIDE 10
#define FG_MIN_PX 0.1

struct node {
	const char *name;
	uint32_t parent;
	uint32_t first_child, next_sibling; /* 0 = none (node 0 is the root) */
	uint32_t next_same;  /* next node of the same name_hash; 0 = none */
	uint64_t total;
};

struct ks_flame {
	struct node *nodes;
	size_t n, cap;
	struct ks_hmap hash; /* name_hash(parent, name) -> first node of it */
	char **chunks;       /* name storage */
	size_t nchunks;
	char *chunk;
	size_t chunk_used, chunk_cap;
};

static uint64_t name_hash(uint32_t parent, const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ parent;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

struct ks_flame *ks_flame_new(void)
{
	struct ks_flame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->cap = 1024;
	f->nodes = calloc(f->cap, sizeof(*f->nodes));
	ks_hmap_init(&f->hash, sizeof(uint32_t));
	if (!f->nodes) {
		ks_flame_free(f);
		return NULL;
	}
	f->nodes[0].name = "all";
	f->n = 1;
	return f;
}

void ks_flame_free(struct ks_flame *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nchunks; i++)
		free(f->chunks[i]);
	free(f->chunks);
	free(f->nodes);
	ks_hmap_free(&f->hash);
	free(f);
}

static const char *store_name(struct ks_flame *f, const char *s, size_t len)
{
	char *p;

	if (f->chunk_cap - f->chunk_used < len + 1) {
		size_t cap = len + 1 > 65536 ? len + 1 : 65536;
		char **nc = realloc(f->chunks, (f->nchunks + 1) * sizeof(*nc));

		if (!nc)
			return NULL;
		f->chunks = nc;
		f->chunk = malloc(cap);
		if (!f->chunk)
			return NULL;
		f->chunks[f->nchunks++] = f->chunk;
		f->chunk_used = 0;
		f->chunk_cap = cap;
	}
	p = f->chunk + f->chunk_used;
	memcpy(p, s, len);
	p[len] = '\0';
	f->chunk_used += len + 1;
	return p;
}

/* The child NAME (S, LEN bytes) of PARENT, created if new; -1 on memory.
 * Nodes of one name_hash are chained from the table through next_same and
 * compared whole. */
static int64_t child(struct ks_flame *f, uint32_t parent, const char *s, size_t len)
{
	uint64_t h = name_hash(parent, s, len);
	uint32_t *head, k;
	bool created;

	head = ks_hmap_get(&f->hash, h);
	for (k = head ? *head : 0; k; k = f->nodes[k].next_same) {
		const struct node *nd = &f->nodes[k];

		if (nd->parent == parent && !strncmp(nd->name, s, len) && !nd->name[len])
			return k;
	}
	if (f->n == f->cap) {
		struct node *nn;

		if (f->cap * 2 > UINT32_MAX - 1)
			return -1;
		nn = realloc(f->nodes, f->cap * 2 * sizeof(*nn));
		if (!nn)
			return -1;
		f->nodes = nn;
		f->cap *= 2;
	}
	/* a new key holds 0 (no node) until the node is complete */
	head = ks_hmap_put(&f->hash, h, &created);
	if (!head)
		return -1;
	struct node *nd = &f->nodes[f->n];
	nd->name = store_name(f, s, len);
	if (!nd->name)
		return -1;
	nd->parent = parent;
	nd->first_child = 0;
	nd->next_sibling = f->nodes[parent].first_child;
	nd->total = 0;
	nd->next_same = *head;
	*head = (uint32_t)f->n;
	f->nodes[parent].first_child = (uint32_t)f->n;
	return (int64_t)f->n++;
}

int ks_flame_add(struct ks_flame *f, const char *stack, uint64_t count)
{
	uint32_t cur = 0;
	const char *p = stack;

	f->nodes[0].total += count;
	while (*p) {
		const char *e = strchr(p, ';');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int64_t c;

		if (len) {
			c = child(f, cur, p, len);
			if (c < 0)
				return -1;
			cur = (uint32_t)c;
			f->nodes[cur].total += count;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

static void xml_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				fputc(*s, out);
		}
	}
}

/* Frame colours by kind, the shade varying with the name: the root beige,
 * the VM (or vCPU) at depth 1 blue, guest kernel frames ("_[k]") orange, host frames
 * ("_[h]") teal, "[unknown]" grey, other frames (guest user) green. */
static void colour(const char *name, int depth, char *buf, size_t len)
{
	size_t n = strlen(name);
	uint64_t h = name_hash(0, name, n);
	unsigned v1 = h & 0xff, v2 = (h >> 8) & 0xff;

	if (depth == 0)
		snprintf(buf, len, "rgb(200,200,190)");
	else if (depth == 1)
		snprintf(buf, len, "rgb(%u,%u,%u)", 80 + v1 % 25, 120 + v2 % 30, 220);
	else if (!strcmp(name, "[unknown]") || !strcmp(name, "[unknown]_[k]") ||
		 !strcmp(name, "[unknown]_[h]"))
		snprintf(buf, len, "rgb(%u,%u,%u)", 170 + v1 % 30, 170 + v1 % 30, 170 + v1 % 30);
	else if (n > 4 && !strcmp(name + n - 4, "_[k]"))
		snprintf(buf, len, "rgb(%u,%u,%u)", 230 + v1 % 26, 120 + v2 % 60, 30 + v1 % 30);
	else if (n > 4 && !strcmp(name + n - 4, "_[h]"))
		snprintf(buf, len, "rgb(%u,%u,%u)", 40 + v1 % 40, 170 + v2 % 40, 190 + v1 % 30);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 90 + v1 % 50, 190 + v2 % 40, 70 + v1 % 40);
}

/* One swatch of the legend (kinds of frames). */
static void legend(FILE *out, int x, const char *fill, const char *text)
{
	fprintf(out, "<rect x=\"%d\" y=\"33\" width=\"12\" height=\"12\" fill=\"%s\"/>"
		"<text x=\"%d\" y=\"44\">%s</text>\n", x, fill, x + 16, text);
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
	const struct node *nodes = ctx;

	return strcmp(nodes[*(const uint32_t *)a].name, nodes[*(const uint32_t *)b].name);
}

static void write_frame(FILE *out, const struct ks_flame *f, uint32_t i, int depth, double x,
			double w, int maxdepth)
{
	const struct node *nd = &f->nodes[i];
	double y = FG_PAD_TOP + (double)(maxdepth - depth) * FG_ROW;
	double pct = f->nodes[0].total ? 100.0 * (double)nd->total / (double)f->nodes[0].total : 0;
	char fill[40];

	colour(nd->name, depth, fill, sizeof(fill));
	fputs("<g class=\"f\"><title>", out);
	xml_escape(out, nd->name);
	fprintf(out, " (%llu samples, %.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
		"height=\"%d\" fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\"></text></g>\n",
		(unsigned long long)nd->total, pct, x, y, w, FG_ROW - 1, fill, x + 3,
		y + FG_ROW - 4);
}

struct frame_job {
	uint32_t node;
	int depth;
	double x;
};

static int max_depth(const struct ks_flame *f)
{
	int *d = calloc(f->n, sizeof(*d)), m = 0;
	size_t i;

	if (!d)
		return 0;
	for (i = 1; i < f->n; i++) { /* parents are created before children */
		d[i] = d[f->nodes[i].parent] + 1;
		if (d[i] > m)
			m = d[i];
	}
	free(d);
	return m;
}

static const char script_text[];

static int write_frames(FILE *out, const struct ks_flame *f, int maxdepth)
{
	double scale = (FG_WIDTH - 2.0 * FG_PAD_SIDE) / (double)(f->nodes[0].total ? f->nodes[0].total : 1);
	struct frame_job *stack = malloc((f->n + 1) * sizeof(*stack));
	uint32_t *kids = malloc((f->n + 1) * sizeof(*kids));
	size_t sp = 0;

	if (!stack || !kids) {
		free(stack);
		free(kids);
		return -1;
	}
	stack[sp++] = (struct frame_job){ 0, 0, FG_PAD_SIDE };
	while (sp) {
		struct frame_job j = stack[--sp];
		const struct node *nd = &f->nodes[j.node];
		double w = (double)nd->total * scale, x;
		size_t nk = 0, k;
		uint32_t c;

		if (w < FG_MIN_PX)
			continue;
		write_frame(out, f, j.node, j.depth, j.x, w, maxdepth);
		for (c = nd->first_child; c; c = f->nodes[c].next_sibling)
			kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), cmp_name, f->nodes);
		x = j.x;
		/* push in reverse so the alphabetically first is written first */
		for (k = 0; k < nk; k++) {
			stack[sp + nk - 1 - k] = (struct frame_job){ kids[k], j.depth + 1, x };
			x += (double)f->nodes[kids[k]].total * scale;
		}
		sp += nk;
	}
	free(stack);
	free(kids);
	return 0;
}

int ks_flame_write_svg(struct ks_flame *f, FILE *out, const char *title, struct ks_error *err)
{
	int maxdepth = max_depth(f);
	int height = FG_PAD_TOP + (maxdepth + 1) * FG_ROW + FG_PAD_BOTTOM;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		FG_WIDTH, height, FG_WIDTH, height);
	fputs("<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
	      "#title{font-size:17px;text-anchor:middle}.f:hover rect{stroke:#000;stroke-width:0.5}"
	      ".f text{pointer-events:none}.btn{cursor:pointer;fill:#225}"
	      "#details{font-size:12px}</style>\n", out);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fdf8ee\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"24\">", FG_WIDTH / 2);
	xml_escape(out, title ? title : "Flame graph");
	fprintf(out, "</text>\n<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"24\" "
		"visibility=\"hidden\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"></text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		FG_PAD_SIDE, FG_WIDTH - 120, FG_WIDTH - 160, height - 10, FG_PAD_SIDE, height - 10);
	fputs("<g id=\"legend\">", out);
	legend(out, FG_PAD_SIDE, "rgb(100,150,220)", "VM / vCPU");
	legend(out, FG_PAD_SIDE + 110, "rgb(240,150,45)", "guest kernel");
	legend(out, FG_PAD_SIDE + 230, "rgb(115,210,90)", "guest user");
	legend(out, FG_PAD_SIDE + 340, "rgb(60,190,205)", "host");
	legend(out, FG_PAD_SIDE + 400, "rgb(185,185,185)", "unknown");
	fputs("</g>\n<g id=\"frames\">\n", out);
	if (write_frames(out, f, maxdepth) < 0)
		return ks_error_code(err, KS_E_NOMEM, "out of memory writing the flame graph");
	fprintf(out, "</g>\n<script><![CDATA[\nvar W=%d,PAD=%d;\n%s]]></script>\n</svg>\n",
		FG_WIDTH, FG_PAD_SIDE, script_text);
	if (ferror(out))
		return ks_error_set(err, "write error on the flame graph");
	return 0;
}

/* The interactive part: zoom, search, details line, label fitting. */
static const char script_text[] =
"var frames,details,unzoomBtn,searchBtn,matchedTxt,cur=null;\n"
"function init(e){frames=document.getElementById('frames');\n"
" details=document.getElementById('details').firstChild;\n"
" unzoomBtn=document.getElementById('unzoom');searchBtn=document.getElementById('search');\n"
" matchedTxt=document.getElementById('matched');\n"
" var gs=frames.getElementsByTagName('g');\n"
" for(var i=0;i<gs.length;i++){var r=gs[i].getElementsByTagName('rect')[0];\n"
"  r.setAttribute('bx',r.getAttribute('x'));r.setAttribute('bw',r.getAttribute('width'));}\n"
" relayout();window.addEventListener('resize',relayout);\n"
" frames.addEventListener('click',function(ev){var g=ev.target.closest('g.f');if(g)zoom(g);});\n"
" frames.addEventListener('mouseover',function(ev){var g=ev.target.closest('g.f');\n"
"  if(g)details.nodeValue='Frame: '+g.getElementsByTagName('title')[0].textContent;});\n"
" frames.addEventListener('mouseout',function(){details.nodeValue=' ';});\n"
" unzoomBtn.addEventListener('click',unzoom);searchBtn.addEventListener('click',searchPrompt);\n"
" window.addEventListener('keydown',function(ev){if((ev.ctrlKey||ev.metaKey)&&ev.key=='f'){ev.preventDefault();searchPrompt();}});}\n"
/* the graph is written BW wide: stretch it to the window's width */
"var BW=W;\n"
"function relayout(){var svg=document.documentElement,nw=Math.max(window.innerWidth||BW,400),\n"
" k=(nw-2*PAD)/(BW-2*PAD),h=svg.getAttribute('height'),gs=frames.getElementsByTagName('g');W=nw;\n"
" svg.setAttribute('width',W);svg.setAttribute('viewBox','0 0 '+W+' '+h);\n"
" document.getElementById('title').setAttribute('x',W/2);searchBtn.setAttribute('x',W-120);\n"
" matchedTxt.setAttribute('x',W-160);\n"
" for(var i=0;i<gs.length;i++){var r=gs[i].getElementsByTagName('rect')[0];\n"
"  var x=PAD+(parseFloat(r.getAttribute('bx'))-PAD)*k,w=parseFloat(r.getAttribute('bw'))*k;\n"
"  r.setAttribute('ox',x);r.setAttribute('ow',w);r.setAttribute('x',x);r.setAttribute('width',w);}\n"
" if(cur)zoom(cur);else fitAll();}\n"
"function label(g){var t=g.getElementsByTagName('title')[0].textContent;return t.replace(/ \\([0-9]+ samples, [0-9.]+%\\)$/,'');}\n"
"function fit(g){var r=g.getElementsByTagName('rect')[0],t=g.getElementsByTagName('text')[0];\n"
" var w=parseFloat(r.getAttribute('width'));t.setAttribute('x',parseFloat(r.getAttribute('x'))+3);\n"
" var n=label(g),m=Math.floor((w-6)/7);\n"
" if(m<3){t.textContent='';return;}t.textContent=n.length<=m?n:n.substring(0,m-2)+'..';}\n"
"function fitAll(){var gs=frames.getElementsByTagName('g');for(var i=0;i<gs.length;i++)if(gs[i].style.display!='none')fit(gs[i]);}\n"
"function zoom(g){var r=g.getElementsByTagName('rect')[0];\n"
" var x0=parseFloat(r.getAttribute('ox')),w0=parseFloat(r.getAttribute('ow')),y0=parseFloat(r.getAttribute('y'));\n"
" var s=(W-2*PAD)/w0,gs=frames.getElementsByTagName('g');cur=g;unzoomBtn.setAttribute('visibility','visible');\n"
" for(var i=0;i<gs.length;i++){var e=gs[i].getElementsByTagName('rect')[0];\n"
"  var x=parseFloat(e.getAttribute('ox')),w=parseFloat(e.getAttribute('ow')),y=parseFloat(e.getAttribute('y'));\n"
"  if(y>y0){ if(x<=x0+1e-6&&x+w>=x0+w0-1e-6){e.setAttribute('x',PAD);e.setAttribute('width',W-2*PAD);gs[i].style.display='';gs[i].style.opacity='0.6';}\n"
"   else gs[i].style.display='none';}\n"
"  else if(x>=x0-1e-6&&x+w<=x0+w0+1e-6){e.setAttribute('x',PAD+(x-x0)*s);e.setAttribute('width',w*s);gs[i].style.display='';gs[i].style.opacity='';}\n"
"  else gs[i].style.display='none';}\n"
" fitAll();}\n"
"function unzoom(){var gs=frames.getElementsByTagName('g');cur=null;unzoomBtn.setAttribute('visibility','hidden');\n"
" for(var i=0;i<gs.length;i++){var e=gs[i].getElementsByTagName('rect')[0];e.setAttribute('x',e.getAttribute('ox'));\n"
"  e.setAttribute('width',e.getAttribute('ow'));gs[i].style.display='';gs[i].style.opacity='';}fitAll();}\n"
"function samples(g){var m=g.getElementsByTagName('title')[0].textContent.match(/\\(([0-9]+) samples/);return m?parseInt(m[1]):0;}\n"
"function searchPrompt(){var term=prompt('Search frames (regular expression):','');\n"
" if(term===null)return;search(term);}\n"
"function search(term){var gs=frames.getElementsByTagName('g'),re,total=samples(gs[0]),hit=0,spans=[];\n"
" try{re=new RegExp(term);}catch(e){matchedTxt.textContent='bad expression';return;}\n"
" for(var i=0;i<gs.length;i++){var r=gs[i].getElementsByTagName('rect')[0];\n"
"  if(!r.getAttribute('of'))r.setAttribute('of',r.getAttribute('fill'));\n"
"  if(term!==''&&re.test(label(gs[i]))){r.setAttribute('fill','rgb(230,0,230)');\n"
"   var x=parseFloat(r.getAttribute('ox')),w=parseFloat(r.getAttribute('ow')),inside=false;\n"
"   for(var k=0;k<spans.length;k++)if(x>=spans[k][0]-1e-6&&x+w<=spans[k][1]+1e-6)inside=true;\n"
"   if(!inside){spans.push([x,x+w]);hit+=samples(gs[i]);}}\n"
"  else r.setAttribute('fill',r.getAttribute('of'));}\n"
" matchedTxt.textContent=term===''?'':'Matched: '+(total?(100*hit/total).toFixed(2):'0')+'%';}\n";
