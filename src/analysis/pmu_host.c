/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pmu_host.c - host PMU inventory and vPMU verdicts for `kvmscope pmu check`
 * (see include/kvmscope/pmu_host.h).
 *
 * Sources, all read-only: CPUID (instruction or a fixture file), sysfs
 * (bus/event_source/devices/cpu*, module/kvm*, devices/system/cpu/online),
 * procfs (sys/kernel/nmi_watchdog, PID/cmdline, PID/comm, the PID/fd links,
 * PID/task/TID/{comm,status}).
 *
 * Which perf_event users are system-wide: the kernel does not show a perf
 * event's attributes to other processes (fdinfo of a perf fd has no attr),
 * so for the perf tool we parse its command line (-a, -C, -e with the ":D"
 * pinned modifier, -b/-j/--call-graph lbr), and for other programs we
 * only guess "system-wide" when they hold at least one perf fd per online
 * CPU.  Pinned per-CPU events are the ones that take counters from guests
 * (a guest's counters are per-task pinned events of its vCPU threads);
 * flexible host events are multiplexed and do not.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "kvmscope/limits.h"
#include "kvmscope/attribution.h"
#include "kvmscope/pmu_host.h"
#include "util/procfs.h"

/* ---- cpu sets ---- */
int ks_cpuset_parse(struct ks_cpuset *s, const char *list)
{
	const char *p = list;

	memset(s, 0, sizeof(*s));
	while (*p && *p != '\n') {
		uint64_t a, b;
		size_t n = ks_parse_u64_prefix(p, strlen(p), 10, &a);

		if (!n)
			return -1;
		b = a;
		p += n;
		if (*p == '-') {
			n = ks_parse_u64_prefix(p + 1, strlen(p + 1), 10, &b);
			if (!n || b < a)
				return -1;
			p += 1 + n;
		}
		for (; a <= b && a < KS_PMU_MAX_CPUS; a++)
			s->bits[a / 64] |= 1ULL << (a % 64);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return 0;
}

bool ks_cpuset_test(const struct ks_cpuset *s, int cpu)
{
	return cpu >= 0 && cpu < KS_PMU_MAX_CPUS && (s->bits[cpu / 64] >> (cpu % 64) & 1);
}

int ks_cpuset_count(const struct ks_cpuset *s)
{
	int n = 0;
	size_t i;

	for (i = 0; i < KS_PMU_MAX_CPUS / 64; i++)
		n += __builtin_popcountll(s->bits[i]);
	return n;
}

bool ks_cpuset_intersects(const struct ks_cpuset *a, const struct ks_cpuset *b)
{
	size_t i;

	for (i = 0; i < KS_PMU_MAX_CPUS / 64; i++)
		if (a->bits[i] & b->bits[i])
			return true;
	return false;
}

void ks_cpuset_format(const struct ks_cpuset *s, char *buf, size_t len)
{
	size_t n = 0;
	int c = 0;

	buf[0] = 0;
	while (c < KS_PMU_MAX_CPUS && n + 1 < len) {
		int e;

		if (!ks_cpuset_test(s, c)) {
			c++;
			continue;
		}
		for (e = c; e + 1 < KS_PMU_MAX_CPUS && ks_cpuset_test(s, e + 1); e++)
			;
		n += (size_t)snprintf(buf + n, len - n, e > c ? "%s%d-%d" : "%s%d", n ? "," : "",
				      c, e);
		c = e + 1;
	}
}

/* ---- small file helpers ---- */
/* A whole decimal number from sysfs or procfs (int range), else DFLT. */
static int read_int(const char *s, int dflt)
{
	int64_t v;

	return ks_parse_i64(s, strlen(s), 10, &v) == 0 && v >= INT32_MIN && v <= INT32_MAX ? (int)v
												 : dflt;
}

static void path_join(char *buf, size_t len, const char *root, const char *rel)
{
	snprintf(buf, len, "%s/%s", root, rel);
}

/* Read at most LEN-1 bytes; returns the byte count or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return (ssize_t)n;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = 0;
}

static int read_line(const char *root, const char *rel, char *buf, size_t len)
{
	char path[4096];

	path_join(path, sizeof(path), root, rel);
	if (read_small(path, buf, len) < 0)
		return -1;
	chomp(buf);
	return 0;
}

static bool exists(const char *root, const char *rel)
{
	char path[4096];
	struct stat st;

	path_join(path, sizeof(path), root, rel);
	return stat(path, &st) == 0;
}

/* ---- CPUID ---- */
struct cpuid_src {
	const char *file;
	bool ok;
};

static bool cpuid_from_file(const char *file, uint32_t leaf, uint32_t sub,
			    struct ks_cpuid_regs *r)
{
	FILE *f = fopen(file, "r");
	char line[256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long v[6];

		if (line[0] == '#')
			continue;
		if (sscanf(line, "%lx %lx %lx %lx %lx %lx", &v[0], &v[1], &v[2], &v[3], &v[4],
			   &v[5]) == 6 && v[0] == leaf && v[1] == sub) {
			*r = (struct ks_cpuid_regs){ (uint32_t)v[2], (uint32_t)v[3], (uint32_t)v[4],
						     (uint32_t)v[5] };
			found = true;
		}
	}
	fclose(f);
	return found;
}

static bool cpuid_get(const struct cpuid_src *s, uint32_t leaf, uint32_t sub,
		      struct ks_cpuid_regs *r)
{
	memset(r, 0, sizeof(*r));
	if (s->file)
		return cpuid_from_file(s->file, leaf, sub, r);
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned a, b, c, d;
		unsigned max = __get_cpuid_max(leaf & 0x80000000u, NULL);

		if (max < leaf)
			return false;
		__cpuid_count(leaf, sub, a, b, c, d);
		*r = (struct ks_cpuid_regs){ a, b, c, d };
		return true;
	}
#else
	(void)leaf;
	(void)sub;
	return false;
#endif
}

void ks_pmu_decode_intel_0xa(const struct ks_cpuid_regs *r, struct ks_pmu_caps *c)
{
	c->version = (int)(r->eax & 0xff);
	c->gp = (int)((r->eax >> 8) & 0xff);
	c->gp_width = (int)((r->eax >> 16) & 0xff);
	if (c->version > 1) {
		c->fixed = (int)(r->edx & 0x1f);
		c->fixed_width = (int)((r->edx >> 5) & 0xff);
	}
	/* v5+: ECX is a bitmap of supported fixed counters */
	if (c->version >= 5 && r->ecx) {
		int n = __builtin_popcount(r->ecx);

		if (n > c->fixed)
			c->fixed = n;
	}
}

void ks_pmu_decode_amd(const struct ks_cpuid_regs *ext1, const struct ks_cpuid_regs *ext22,
		       bool has_ext22, struct ks_pmu_caps *c)
{
	bool v2 = has_ext22 && (ext22->eax & 1);

	c->gp_width = 48;
	c->fixed = 0;
	if (v2) {
		c->version = 2;
		c->gp = (int)(ext22->ebx & 0xf);
		if (ext22->eax & 2) { /* LbrStack */
			c->lbr_depth = (int)((ext22->ebx >> 4) & 0x3f);
			c->lbr_source = "CPUID 0x80000022 EBX[9:4]";
		}
	} else {
		c->version = 1;
		c->gp = (ext1->ecx >> 23 & 1) ? 6 : 4; /* PerfCtrExtCore */
	}
}

static void read_vendor(const struct cpuid_src *s, struct ks_pmu_caps *c, uint32_t *max)
{
	struct ks_cpuid_regs r;

	*max = 0;
	if (!cpuid_get(s, 0, 0, &r))
		return;
	*max = r.eax;
	memcpy(c->vendor, &r.ebx, 4);
	memcpy(c->vendor + 4, &r.edx, 4);
	memcpy(c->vendor + 8, &r.ecx, 4);
	c->vendor[12] = 0;
	c->intel = !strcmp(c->vendor, "GenuineIntel");
	c->amd = !strcmp(c->vendor, "AuthenticAMD") || !strcmp(c->vendor, "HygonGenuine");
	if (*max >= 1 && cpuid_get(s, 1, 0, &r))
		c->hypervisor = r.ecx >> 31 & 1;
}

/* Intel architectural LBR depth: CPUID 7.0:EDX[19], then 0x1C EAX[7:0]
 * (bit n = depth 8*(n+1) supported). */
static void intel_arch_lbr(const struct cpuid_src *s, uint32_t max, struct ks_pmu_caps *c)
{
	struct ks_cpuid_regs r;
	int n;

	if (max < 0x1c || !cpuid_get(s, 7, 0, &r) || !(r.edx >> 19 & 1))
		return;
	if (!cpuid_get(s, 0x1c, 0, &r) || !(r.eax & 0xff))
		return;
	n = 31 - __builtin_clz(r.eax & 0xff);
	c->lbr_depth = 8 * (n + 1);
	c->lbr_source = "CPUID 0x1C (architectural LBR)";
}

static void read_cpuid_caps(const struct ks_pmu_host_opts *o, struct ks_pmu_caps *c)
{
	struct cpuid_src s = { o->cpuid_file, true };
	struct ks_cpuid_regs r, e1, e22;
	uint32_t max, emax = 0;

	read_vendor(&s, c, &max);
	if (c->intel && max >= 0xa && cpuid_get(&s, 0xa, 0, &r))
		ks_pmu_decode_intel_0xa(&r, c);
	if (c->intel)
		intel_arch_lbr(&s, max, c);
	if (c->amd) {
		if (cpuid_get(&s, 0x80000000, 0, &r))
			emax = r.eax;
		if (emax >= 0x80000001 && cpuid_get(&s, 0x80000001, 0, &e1)) {
			bool h22 = emax >= 0x80000022 && cpuid_get(&s, 0x80000022, 0, &e22);

			ks_pmu_decode_amd(&e1, &e22, h22, c);
		}
	}
}

/* bus/event_source/devices: cpu, cpu_core, cpu_atom are core PMUs. */
static void read_sysfs_pmus(const char *sys, struct ks_pmu_caps *c)
{
	static const char *const names[] = { "cpu", "cpu_core", "cpu_atom" };
	char rel[256], buf[64];
	size_t i, n = 0;

	c->branches = -1;
	for (i = 0; i < 3; i++) {
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s", names[i]);
		if (!exists(sys, rel))
			continue;
		c->sysfs_cpu_pmu = true;
		n += (size_t)snprintf(c->sysfs_pmus + n, sizeof(c->sysfs_pmus) - n, "%s%s",
				      n ? "," : "", names[i]);
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/caps/pmu_name", names[i]);
		if (!c->pmu_name[0] && read_line(sys, rel, buf, sizeof(buf)) == 0)
			snprintf(c->pmu_name, sizeof(c->pmu_name), "%s", buf);
		snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/caps/branches", names[i]);
		if (c->branches < 0 && read_line(sys, rel, buf, sizeof(buf)) == 0)
			c->branches = read_int(buf, -1);
	}
	if (c->branches > 0) {
		c->lbr_depth = c->branches;
		c->lbr_source = "sysfs caps/branches";
	}
}

/* ---- KVM ---- */
static void read_kvm(const struct ks_pmu_host_opts *o, struct ks_pmu_kvm *k)
{
	char buf[64], path[4096];
	DIR *d;
	struct dirent *de;
	size_t nm = 0, np = 0;

	k->module = exists(o->sysfs_root, "module/kvm");
	k->dev_kvm = exists(o->dev_root, "kvm");
	k->enable_pmu = -1;
	if (read_line(o->sysfs_root, "module/kvm/parameters/enable_pmu", buf, sizeof(buf)) == 0)
		k->enable_pmu = buf[0] == 'Y' || buf[0] == '1';
	path_join(path, sizeof(path), o->sysfs_root, "module");
	d = opendir(path);
	while (d && (de = readdir(d))) {
		char pdir[512];
		DIR *pd;
		struct dirent *pe;

		if (strncmp(de->d_name, "kvm_", 4))
			continue;
		nm += (size_t)snprintf(k->vendor_modules + nm, sizeof(k->vendor_modules) - nm,
				       "%s%s", nm ? "," : "", de->d_name);
		if (nm >= sizeof(k->vendor_modules))
			nm = sizeof(k->vendor_modules) - 1;
		if (snprintf(pdir, sizeof(pdir), "%s/%s/parameters", path, de->d_name) >=
		    (int)sizeof(pdir))
			continue;
		pd = opendir(pdir);
		while (pd && (pe = readdir(pd))) {
			char rel[600];

			if (!strstr(pe->d_name, "pmu") && !strstr(pe->d_name, "lbr"))
				continue;
			snprintf(rel, sizeof(rel), "module/%s/parameters/%s", de->d_name, pe->d_name);
			if (read_line(o->sysfs_root, rel, buf, sizeof(buf)) < 0)
				continue;
			np += (size_t)snprintf(k->vendor_params + np, sizeof(k->vendor_params) - np,
					       "%s%s.%s=%s", np ? " " : "", de->d_name, pe->d_name, buf);
			if (np >= sizeof(k->vendor_params))
				np = sizeof(k->vendor_params) - 1;
		}
		if (pd)
			closedir(pd);
	}
	if (d)
		closedir(d);
}

/* ---- command lines ---- */
/* argv[i] of a NUL-separated buffer, NULL past the end. */
struct argv_iter {
	const char *p, *end;
};

static const char *next_arg(struct argv_iter *it)
{
	const char *a = it->p;
	const char *nul;

	if (it->p >= it->end)
		return NULL;
	nul = memchr(it->p, 0, (size_t)(it->end - it->p));
	it->p = nul ? nul + 1 : it->end;
	return nul ? a : NULL;  /* an unterminated last arg is dropped */
}

static const char *base_name(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static bool is_modifier(const char *m)
{
	return *m && strspn(m, "ukhIGHpPSDWeb") == strlen(m);
}

static bool is_software_event(const char *base)
{
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "faults", "context-switches", "cs",
		"cpu-migrations", "migrations", "minor-faults", "major-faults", "alignment-faults",
		"emulation-faults", "dummy", "bpf-output", "cgroup-switches", NULL,
	};
	int i;

	if (!strncmp(base, "software/", 9) || !strncmp(base, "tracepoint/", 11) ||
	    !strncmp(base, "mem:", 4) || !strncmp(base, "probe", 5) || strchr(base, ':'))
		return true;
	for (i = 0; sw[i]; i++)
		if (!strcmp(base, sw[i]))
			return true;
	return false;
}

/* One event of an -e list: "cycles:D", "cpu/event=0x3c/uD", "sched:sched_switch".
 * Returns 1 if it is a hardware event, and sets *pinned. */
static int count_event(char *ev, bool *pinned)
{
	char *mods = NULL, *colon, *slash, *close;

	*pinned = false;
	while (*ev == '{')
		ev++;
	close = strchr(ev, '}');
	if (close) {
		if (close[1] == ':' && is_modifier(close + 2))
			mods = close + 2;
		*close = 0;
	}
	if (!*ev)
		return 0;
	slash = strrchr(ev, '/');
	colon = strrchr(ev, ':');
	if (colon && (!slash || colon > slash) && is_modifier(colon + 1)) {
		*colon = 0;
		mods = colon + 1;
	} else if (slash && slash != ev && slash[1] && is_modifier(slash + 1)) {
		mods = slash + 1;
	}
	if (is_software_event(ev))
		return 0;
	*pinned = mods && strchr(mods, 'D');
	return 1;
}

/* Split an -e list on commas outside pmu/.../ terms; a group's modifiers
 * ("{a,b}:D") apply to all its members. */
static void count_events(const char *list, struct ks_pmu_holder *h)
{
	char buf[1024];
	size_t i, start = 0;
	bool in_slash = false, in_group = false;
	int group_hw = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (i = 0;; i++) {
		char c = buf[i];

		if (c == '/')
			in_slash = !in_slash;
		if (c == '{')
			in_group = true, group_hw = 0;
		if ((c == ',' && !in_slash) || c == 0) {
			bool pinned, closes;
			int hw;

			buf[i] = 0;
			closes = strchr(buf + start, '}') != NULL;
			hw = count_event(buf + start, &pinned);
			h->hw_events += hw;
			group_hw += hw;
			if (closes && in_group) {
				if (pinned)
					h->pinned_events += group_hw;
				in_group = false;
			} else if (!in_group && pinned) {
				h->pinned_events += hw;
			}
			if (!c)
				break;
			start = i + 1;
		}
	}
}

struct perf_opts {
	bool saw_events, per_task, top;
	const char *sub;
};

/* Short options of perf record/stat/top that take a value. */
static bool short_takes_value(char c)
{
	return c && strchr("eCjoptFcmuGIrxD", c);
}

__attribute__((noinline)) static void perf_option(const char *opt, const char *val, struct perf_opts *po,
			const struct ks_cpuset *online, struct ks_pmu_holder *h)
{
	if (!strcmp(opt, "a") || !strcmp(opt, "all-cpus")) {
		h->system_wide = true;
	} else if ((!strcmp(opt, "C") || !strcmp(opt, "cpu")) && val) {
		h->system_wide = true;
		if (ks_cpuset_parse(&h->cpus, val) < 0)
			h->cpus = *online;
	} else if ((!strcmp(opt, "e") || !strcmp(opt, "event")) && val) {
		po->saw_events = true;
		count_events(val, h);
	} else if (!strcmp(opt, "b") || !strcmp(opt, "branch-any") ||
		   ((!strcmp(opt, "j") || !strcmp(opt, "branch-filter")) && val)) {
		h->lbr = true;
	} else if (!strcmp(opt, "call-graph") && val && !strncmp(val, "lbr", 3)) {
		h->lbr = true;
	} else if (!strcmp(opt, "p") || !strcmp(opt, "pid") || !strcmp(opt, "t") ||
		   !strcmp(opt, "tid") || !strcmp(opt, "u") || !strcmp(opt, "uid")) {
		po->per_task = true;
	}
}

static bool long_takes_value(const char *name)
{
	static const char *const v[] = { "event", "cpu", "branch-filter", "call-graph", "output",
					 "pid", "tid", "freq", "count", "mmap-pages", "cgroup",
					 "interval-print", "repeat", "field-separator", "delay",
					 "uid", "input", NULL };
	int i;

	for (i = 0; v[i]; i++)
		if (!strcmp(name, v[i]))
			return true;
	return false;
}

/* Returns the number of argv entries consumed after A (0 or 1). */
static int perf_arg(const char *a, const char *next, struct perf_opts *po,
		    const struct ks_cpuset *online, struct ks_pmu_holder *h)
{
	if (a[1] == '-') {
		char name[64];
		const char *eq = strchr(a + 2, '=');
		size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

		snprintf(name, sizeof(name), "%.*s", (int)n, a + 2);
		if (eq) {
			perf_option(name, eq + 1, po, online, h);
			return 0;
		}
		if (long_takes_value(name) && strcmp(name, "call-graph")) {
			perf_option(name, next, po, online, h);
			return next ? 1 : 0;
		}
		/* --call-graph takes an optional value: only a known mode */
		if (!strcmp(name, "call-graph") && next &&
		    (!strncmp(next, "lbr", 3) || !strncmp(next, "fp", 2) || !strncmp(next, "dwarf", 5))) {
			perf_option(name, next, po, online, h);
			return 1;
		}
		perf_option(name, NULL, po, online, h);
		return 0;
	}
	for (const char *c = a + 1; *c; c++) {
		char opt[2] = { *c, 0 };

		if (short_takes_value(*c)) {
			if (c[1]) {
				perf_option(opt, c + 1, po, online, h);
				return 0;
			}
			perf_option(opt, next, po, online, h);
			return next ? 1 : 0;
		}
		perf_option(opt, NULL, po, online, h);
	}
	return 0;
}

static void perf_defaults(const struct perf_opts *po, const struct ks_cpuset *online,
			  struct ks_pmu_holder *h)
{
	if (po->top && !po->per_task)
		h->system_wide = true;
	if (h->system_wide && !ks_cpuset_count(&h->cpus))
		h->cpus = *online;
	if (!po->saw_events && po->sub) {
		if (!strcmp(po->sub, "record") || !strcmp(po->sub, "top"))
			h->hw_events = 1;     /* cycles */
		else if (!strcmp(po->sub, "stat"))
			h->hw_events = 4;     /* cycles, instructions, branches, branch-misses */
	}
	h->lbr_pinned = h->lbr && h->pinned_events > 0;
}

void ks_pmu_parse_perf_cmdline(const char *argv, size_t len, const struct ks_cpuset *online,
			       struct ks_pmu_holder *h)
{
	struct argv_iter it = { argv, argv + len };
	struct perf_opts po = { 0 };
	const char *a = next_arg(&it), *next;

	h->is_perf = true;
	if (!a)
		return;
	a = next_arg(&it);
	while (a) {
		next = next_arg(&it);
		if (!strcmp(a, "--"))
			break;
		if (a[0] == '-' && a[1]) {
			if (perf_arg(a, next, &po, online, h))
				next = next_arg(&it);
		} else if (!po.sub) {
			po.sub = a;
			po.top = !strcmp(a, "top");
		} else if (!strcmp(po.sub, "kvm") || (!strcmp(po.sub, "stat") && !strcmp(a, "record"))) {
			/* "perf kvm stat record", "perf stat record": more command words */
		} else {
			break; /* the workload command */
		}
		a = next;
	}
	perf_defaults(&po, online, h);
}

/* QEMU -cpu MODEL,opt=val,+flag,-flag */
static void qemu_cpu(const char *val, struct ks_pmu_vm *v)
{
	char buf[1024], *tok, *save = NULL;
	bool first = true;

	snprintf(buf, sizeof(buf), "%s", val);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = false) {
		if (first) {
			snprintf(v->cpu_model, sizeof(v->cpu_model), "%s", tok);
			if (!strcmp(tok, "host") || !strcmp(tok, "max")) {
				v->pmu = 1;
				v->pmu_why = "default for -cpu host/max";
			} else {
				v->pmu = 0;
				v->pmu_why = "default for named CPU models";
			}
		} else if (!strcmp(tok, "pmu=on") || !strcmp(tok, "+pmu") || !strcmp(tok, "pmu") ||
			   !strcmp(tok, "pmu=true")) {
			v->pmu = 1;
			v->pmu_why = "pmu=on";
		} else if (!strcmp(tok, "pmu=off") || !strcmp(tok, "-pmu") ||
			   !strcmp(tok, "pmu=false")) {
			v->pmu = 0;
			v->pmu_why = "pmu=off";
		} else if (!strncmp(tok, "lbr-fmt=", 8)) {
			snprintf(v->lbr_fmt, sizeof(v->lbr_fmt), "%s", tok + 8);
		}
	}
}

bool ks_pmu_parse_qemu_cmdline(const char *argv, size_t len, struct ks_pmu_vm *v)
{
	struct argv_iter it = { argv, argv + len };
	const char *a = next_arg(&it), *next;

	if (!a || !strstr(base_name(a), "qemu"))
		return false;
	v->pmu = 0;
	v->pmu_why = "QEMU default (-cpu qemu64: pmu=off)";
	for (a = next_arg(&it); a; a = next) {
		next = next_arg(&it);
		if (a[0] == '-' && a[1] == '-')
			a++;       /* QEMU accepts --opt as -opt */
		if (!strcmp(a, "-cpu") && next)
			qemu_cpu(next, v);
		else if (!strcmp(a, "-name") && next)
			ks_qemu_name_of(next, v->name, sizeof(v->name));
	}
	return true;
}

/* ---- /proc scan ---- */
struct proc_fds {
	int perf, kvm_vm;
	bool unreadable;
};

static void scan_fds(const char *proc, const char *pid, struct proc_fds *f)
{
	char dir[4096], link[4096], target[256];
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof(dir), "%s/%s/fd", proc, pid);
	d = opendir(dir);
	if (!d) {
		f->unreadable = errno == EACCES || errno == EPERM;
		return;
	}
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(link, sizeof(link), "%s/%s", dir, de->d_name) >= (int)sizeof(link))
			continue;
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		f->perf += !strcmp(target, "anon_inode:[perf_event]");
		f->kvm_vm += !strcmp(target, "anon_inode:kvm-vm");
	}
	closedir(d);
}

/* Read /proc/PID/cmdline into BUF; returns its length (0 if none). */
static size_t read_cmdline(const char *proc, const char *pid, char *buf, size_t len)
{
	char path[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/cmdline", proc, pid);
	n = read_small(path, buf, len);
	if (n <= 0)
		buf[0] = 0;
	return n > 0 ? (size_t)n : 0;
}

static void printable_cmdline(const char *argv, size_t n, char *out, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 1 < len; i++)
		out[o++] = argv[i] ? (isprint((unsigned char)argv[i]) ? argv[i] : '?') : ' ';
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = 0;
}

static bool cpus_allowed(const char *status_path, struct ks_cpuset *s)
{
	char buf[8192], *p;

	if (read_small(status_path, buf, sizeof(buf)) < 0)
		return false;
	p = strstr(buf, "Cpus_allowed_list:");
	if (!p)
		return false;
	p += strlen("Cpus_allowed_list:");
	while (*p == ' ' || *p == '\t')
		p++;
	return ks_cpuset_parse(s, p) == 0;
}

/* vCPU threads ("CPU n/KVM") and the CPUs they may run on. */
static void vm_threads(const char *proc, const char *pid, struct ks_pmu_vm *v)
{
	char dir[4096], path[4400], comm[64];
	DIR *d;
	struct dirent *de;
	struct ks_cpuset s;

	snprintf(dir, sizeof(dir), "%s/%s/task", proc, pid);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, de->d_name);
		if (read_small(path, comm, sizeof(comm)) < 0)
			continue;
		chomp(comm);
		/* the name rule of the host model (attribution.h) */
		if (ks_attr_vcpu_from_name(comm) < 0)
			continue;
		v->nvcpus++;
		snprintf(path, sizeof(path), "%s/%s/status", dir, de->d_name);
		if (cpus_allowed(path, &s)) {
			size_t i;

			for (i = 0; i < KS_PMU_MAX_CPUS / 64; i++)
				v->cpus.bits[i] |= s.bits[i];
		}
	}
	if (d)
		closedir(d);
	if (!ks_cpuset_count(&v->cpus)) {
		snprintf(path, sizeof(path), "%s/%s/status", proc, pid);
		cpus_allowed(path, &v->cpus);
	}
}

static bool push(void **arr, size_t *n, size_t elsize, const void *el)
{
	void *na = realloc(*arr, (*n + 1) * elsize);

	if (!na)
		return false;
	memcpy((char *)na + *n * elsize, el, elsize);
	*arr = na;
	(*n)++;
	return true;
}

static void read_comm(const char *proc, const char *pid, char *buf, size_t len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/comm", proc, pid);
	if (read_small(path, buf, len) < 0)
		buf[0] = 0;
	chomp(buf);
}

static bool is_perf_tool(const char *argv0)
{
	const char *b = base_name(argv0);

	return !strncmp(b, "perf", 4) && (!b[4] || b[4] == '_' || b[4] == '-' || isdigit((unsigned char)b[4]));
}

static void add_holder(struct ks_pmu_host *h, const char *proc, const char *pid,
		       const char *argv, size_t alen, int nfds)
{
	struct ks_pmu_holder ho;

	memset(&ho, 0, sizeof(ho));
	ho.pid = read_int(pid, 0);
	ho.nfds = nfds;
	read_comm(proc, pid, ho.comm, sizeof(ho.comm));
	printable_cmdline(argv, alen, ho.cmdline, sizeof(ho.cmdline));
	if (alen && is_perf_tool(argv)) {
		ks_pmu_parse_perf_cmdline(argv, alen, &h->online, &ho);
	} else if (h->ncpus && nfds >= h->ncpus) {
		ho.system_wide_guess = true;
		ho.cpus = h->online;
	}
	push((void **)&h->holders, &h->nholders, sizeof(ho), &ho);
}

static void add_vm(struct ks_pmu_host *h, const char *proc, const char *pid, const char *argv,
		   size_t alen)
{
	struct ks_pmu_vm v;

	memset(&v, 0, sizeof(v));
	v.pid = read_int(pid, 0);
	v.pmu = -1;
	v.pmu_why = "not QEMU: unknown";
	ks_pmu_parse_qemu_cmdline(argv, alen, &v);
	if (!v.name[0])
		read_comm(proc, pid, v.name, sizeof(v.name));
	vm_threads(proc, pid, &v);
	if (!ks_cpuset_count(&v.cpus))
		v.cpus = h->online;
	push((void **)&h->vms, &h->nvms, sizeof(v), &v);
}

/* A command line longer than this is cut (the program name and the
 * options that matter come first). */
#define ARGV_MAX 65536

static void scan_procs(struct ks_pmu_host *h, const char *proc)
{
	DIR *d = opendir(proc);
	struct dirent *de;
	char *argv = malloc(ARGV_MAX);

	while (d && argv && (de = readdir(d))) {
		struct proc_fds f = { 0 };
		size_t alen;
		bool qemu_kvm;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		scan_fds(proc, de->d_name, &f);
		h->unreadable += f.unreadable;
		alen = read_cmdline(proc, de->d_name, argv, ARGV_MAX);
		if (f.perf)
			add_holder(h, proc, de->d_name, argv, alen, f.perf);
		qemu_kvm = alen && strstr(base_name(argv), "qemu") &&
			   (memmem(argv, alen, "kvm", 3) != NULL);
		if (f.kvm_vm || qemu_kvm)
			add_vm(h, proc, de->d_name, argv, alen);
	}
	free(argv);
	if (d)
		closedir(d);
}

/* ---- verdicts ---- */
static void append(char *buf, size_t len, const char *fmt, const char *s)
{
	size_t n = strlen(buf);

	if (n + 1 < len)
		snprintf(buf + n, len - n, fmt, s);
}

static void host_pinned(struct ks_pmu_host *h)
{
	size_t i;

	h->pinned_gp = h->pinned_fixed = 0;
	if (h->nmi_watchdog == 1 && h->caps.sysfs_cpu_pmu) {
		/* the watchdog counts cycles: FIXED_CTR1 on Intel when present */
		if (h->caps.intel && h->caps.fixed >= 2)
			h->pinned_fixed++;
		else
			h->pinned_gp++;
	}
	for (i = 0; i < h->nholders; i++)   /* pid 0: the watchdog, counted above */
		if (h->holders[i].system_wide && h->holders[i].pid)
			h->pinned_gp += h->holders[i].pinned_events;
}

static void vm_verdict(struct ks_pmu_host *h, struct ks_pmu_vm *v)
{
	int pgp = 0, pfx = 0;
	size_t i;
	char who[96];

	if (h->nmi_watchdog == 1 && h->caps.sysfs_cpu_pmu) {
		if (h->caps.intel && h->caps.fixed >= 2)
			pfx++;
		else
			pgp++;
		append(v->takers, sizeof(v->takers), "%s", "NMI watchdog");
	}
	for (i = 0; i < h->nholders; i++) {
		const struct ks_pmu_holder *ho = &h->holders[i];

		if (!ho->pid || !ho->system_wide || !ks_cpuset_intersects(&ho->cpus, &v->cpus))
			continue;
		if (ho->lbr_pinned)
			v->lbr_may_be_taken = v->lbr_possible;
		if (!ho->pinned_events)
			continue;
		pgp += ho->pinned_events;
		snprintf(who, sizeof(who), "%s%s (pid %d)", v->takers[0] ? ", " : "", ho->comm,
			 ho->pid);
		append(v->takers, sizeof(v->takers), "%s", who);
	}
	v->avail_gp = h->caps.gp > pgp ? h->caps.gp - pgp : 0;
	v->avail_fixed = h->caps.fixed > pfx ? h->caps.fixed - pfx : 0;
	v->may_read_wrong = v->takers[0] && v->pmu != 0;
	if (h->kvm.enable_pmu == 0)
		snprintf(v->verdict, sizeof(v->verdict), "no vPMU: KVM enable_pmu=N");
	else if (v->pmu == 0)
		snprintf(v->verdict, sizeof(v->verdict), "no vPMU (%s)%s", v->pmu_why,
			 h->caps.amd ? "; on AMD, KVM may still expose the legacy PMU" : "");
	else if (!h->caps.sysfs_cpu_pmu)
		snprintf(v->verdict, sizeof(v->verdict),
			 "host has no hardware PMU: the guest's counters have nothing behind them");
	else if (v->may_read_wrong)
		snprintf(v->verdict, sizeof(v->verdict),
			 "guest PMU may read wrong values: host pinned users on its CPUs: %s",
			 v->takers);
	else
		snprintf(v->verdict, sizeof(v->verdict), "ok: %d general-purpose + %d fixed counters "
			 "available to the guest", v->avail_gp, v->avail_fixed);
	if (v->lbr_may_be_taken)
		append(v->verdict, sizeof(v->verdict), "%s",
		       "; guest LBR may be taken by a host pinned LBR user");
}

static void verdicts(struct ks_pmu_host *h)
{
	size_t i;

	host_pinned(h);
	for (i = 0; i < h->nvms; i++) {
		struct ks_pmu_vm *v = &h->vms[i];

		v->lbr_possible = v->pmu != 0 && h->caps.lbr_depth > 0 &&
				  (v->lbr_fmt[0] || (h->caps.intel && !strcmp(v->cpu_model, "host")));
		vm_verdict(h, v);
	}
}

static void add_watchdog(struct ks_pmu_host *h)
{
	struct ks_pmu_holder ho;

	if (h->nmi_watchdog != 1)
		return;
	memset(&ho, 0, sizeof(ho));
	snprintf(ho.comm, sizeof(ho.comm), "NMI watchdog");
	snprintf(ho.cmdline, sizeof(ho.cmdline), "kernel.nmi_watchdog=1");
	ho.system_wide = true;
	ho.cpus = h->online;
	if (h->caps.sysfs_cpu_pmu) {
		ho.hw_events = 1;
		ho.pinned_events = 1;
	}
	push((void **)&h->holders, &h->nholders, sizeof(ho), &ho);
}

int ks_pmu_host_scan(struct ks_pmu_host **out, const struct ks_pmu_host_opts *o_in,
		     struct ks_error *err)
{
	struct ks_pmu_host_opts o = *o_in;
	struct ks_pmu_host *h = calloc(1, sizeof(*h));
	char buf[4096];

	*out = NULL;
	if (!h)
		return ks_error_code(err, KS_E_NOMEM, "out of memory");
	if (!o.sysfs_root)
		o.sysfs_root = "/sys";
	if (!o.proc_root)
		o.proc_root = "/proc";
	if (!o.dev_root)
		o.dev_root = "/dev";
	if (o.cpuid_file && access(o.cpuid_file, R_OK) != 0) {
		free(h);
		return ks_error_code(err, KS_E_IO, "%s: %s", o.cpuid_file, strerror(errno));
	}
	read_cpuid_caps(&o, &h->caps);
	read_sysfs_pmus(o.sysfs_root, &h->caps);
	read_kvm(&o, &h->kvm);
	h->nmi_watchdog = -1;
	if (read_line(o.proc_root, "sys/kernel/nmi_watchdog", buf, sizeof(buf)) == 0)
		h->nmi_watchdog = read_int(buf, -1) < 0 ? -1 : read_int(buf, -1) > 0;
	if (read_line(o.sysfs_root, "devices/system/cpu/online", buf, sizeof(buf)) < 0 ||
	    ks_cpuset_parse(&h->online, buf) < 0)
		ks_cpuset_parse(&h->online, "0");
	h->ncpus = ks_cpuset_count(&h->online);
	add_watchdog(h);
	scan_procs(h, o.proc_root);
	verdicts(h);
	*out = h;
	return 0;
}

void ks_pmu_host_free(struct ks_pmu_host *h)
{
	if (!h)
		return;
	free(h->holders);
	free(h->vms);
	free(h);
}
