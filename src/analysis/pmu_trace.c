/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pmu_trace.c - vPMU / LBR MSR traffic from KVM traces (see
 * include/kvmscope/pmu_trace.h).  Used by `kvmscope pmu -i FILE`.
 *
 * Per host thread: the vCPU of its last kvm_entry, the time of its pending
 * kvm_exit and the row of its pending kvm_msr.  kvm_entry closes a pending
 * access: msr_ns = entry - kvm_msr (perf's --event msr), exit_ns = entry -
 * kvm_exit.  Rows live in growable arrays found through hash tables
 * (util/hashmap.h) keyed by (vm, vcpu, msr).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "arch/arch.h"
#include "arch/x86_msr.h"
#include "kvmscope/field.h"
#include "kvmscope/host.h"
#include "kvmscope/pmu_trace.h"
#include "kvmscope/source.h"
#include "util/hashmap.h"

#define DEBUGCTL_MSR 0x1d9
#define ARCH_LBR_CTL_MSR 0x14ce
#define EVTSEL_EN (1ULL << 22)

/* The maps: key (a, b, c), as the two words {a << 32 | b, c}, -> index
 * into an array. */
struct key3 {
	uint32_t a, b, c;
};

/* ---- state ---- */
struct thread {
	int32_t tid;
	bool known;
	int32_t vcpu;
	int32_t vm;
	uint64_t exit_ts;           /* 0 = no exit pending */
	uint64_t msr_ts;            /* 0 = no kvm_msr pending */
	size_t msr_row;             /* row of the pending kvm_msr */
};

struct comm {
	int32_t pid;
	char name[32];
};

struct ks_pmu_trace {
	struct ks_pmu_trace_config cfg;
	struct ks_pmu_trace_summary sum;
	bool sorted;

	struct tep_event *ev_msr, *ev_exit, *ev_entry, *last_other;
	struct tep_event *seen[64];       /* events already classified */
	int nseen;
	struct ks_field f_ecx, f_data, f_write, f_exc, f_reason, f_isa, f_vcpu;

	struct ks_pmu_msr_row *rows;
	size_t nrows, caprows;
	struct ks_hmap rowmap;
	struct ks_pmu_vcpu *vcpus;
	size_t nvcpus, capvcpus;
	struct ks_hmap vcpumap;
	struct ks_pmu_counter *ctrs;
	size_t nctrs, capctrs;
	struct ks_hmap ctrmap;
	struct thread *threads;
	size_t nthreads, capthreads;
	struct ks_hmap threadmap;
	struct comm *comms;
	size_t ncomms, capcomms;
	struct ks_host *host;             /* threads -> VM, vCPU, names */
	bool failed_rec;                  /* the host model failed (budget): stopped */
	uint64_t failed_offset;           /* at this record */
};

static struct key3 row_key(const void *arr, size_t i)
{
	const struct ks_pmu_msr_row *r = (const struct ks_pmu_msr_row *)arr + i;

	return (struct key3){ (uint32_t)r->vm, (uint32_t)r->vcpu, r->msr };
}

static struct key3 vcpu_key(const void *arr, size_t i)
{
	const struct ks_pmu_vcpu *v = (const struct ks_pmu_vcpu *)arr + i;

	return (struct key3){ (uint32_t)v->vm, (uint32_t)v->vcpu, 0 };
}

static struct key3 ctr_key(const void *arr, size_t i)
{
	const struct ks_pmu_counter *c = (const struct ks_pmu_counter *)arr + i;

	return (struct key3){ (uint32_t)c->vm, (uint32_t)c->vcpu, c->msr };
}

/* Find or add the element keyed K in (*arr, *n, *cap) of ELSIZE bytes;
 * a new element is zeroed.  Returns its index, SIZE_MAX on allocation
 * failure. */
static size_t lookup(void **arr, size_t *n, size_t *cap, size_t elsize, struct ks_hmap *m,
		     struct key3 k, bool *created)
{
	uint64_t key[2] = { (uint64_t)k.a << 32 | k.b, k.c };
	const uint32_t *found = ks_hmap_get_wide(m, key);
	uint32_t *v;

	*created = false;
	if (found)
		return *found;
	if (*n >= UINT32_MAX)
		return SIZE_MAX;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 32;
		void *na = realloc(*arr, nc * elsize);

		if (!na)
			return SIZE_MAX;
		*arr = na;
		*cap = nc;
	}
	v = ks_hmap_put_wide(m, key, created);
	if (!v)
		return SIZE_MAX;
	*v = (uint32_t)*n;
	memset((char *)*arr + *n * elsize, 0, elsize);
	return (*n)++;
}

struct ks_pmu_trace *ks_pmu_trace_new(const struct ks_pmu_trace_config *cfg,
				      const struct ks_source_info *info)
{
	struct ks_pmu_trace *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->host = ks_host_new(NULL, NULL, NULL);
	if (!pt->host) {
		free(pt);
		return NULL;
	}
	ks_hmap_init_wide(&pt->rowmap, 2, sizeof(uint32_t));
	ks_hmap_init_wide(&pt->vcpumap, 2, sizeof(uint32_t));
	ks_hmap_init_wide(&pt->ctrmap, 2, sizeof(uint32_t));
	ks_hmap_init_wide(&pt->threadmap, 2, sizeof(uint32_t));
	pt->cfg = *cfg;
	pt->sum.isa = info ? ks_x86_isa_from_cpuid(info->cpuid) : KS_ISA_UNKNOWN;
	return pt;
}

void ks_pmu_trace_free(struct ks_pmu_trace *pt)
{
	if (!pt)
		return;
	free(pt->rows);
	ks_hmap_free(&pt->rowmap);
	free(pt->vcpus);
	ks_hmap_free(&pt->vcpumap);
	free(pt->ctrs);
	ks_hmap_free(&pt->ctrmap);
	free(pt->threads);
	ks_hmap_free(&pt->threadmap);
	free(pt->comms);
	ks_host_free(pt->host);
	free(pt);
}

int ks_pmu_trace_set_guests(struct ks_pmu_trace *pt, const struct ks_source *src,
			    struct ks_error *err)
{
	struct ks_host *h = ks_host_new(NULL, src, err);

	if (!h)
		return -1;
	ks_host_free(pt->host);
	pt->host = h;
	return 0;
}

int ks_pmu_trace_error(const struct ks_pmu_trace *pt, const char *path, struct ks_error *err)
{
	return pt->failed_rec ? ks_host_error_at(pt->host, path, &(struct ks_record){
						 .offset = pt->failed_offset }, err) : 0;
}

struct ks_host *ks_pmu_trace_host(const struct ks_pmu_trace *pt)
{
	return pt->host;
}

/* ---- event classification ---- */
static bool pmu_related_name(const struct tep_event *ev)
{
	return !strcmp(ev->system, "msr") || strstr(ev->name, "pmu") || strstr(ev->name, "lbr") ||
	       strstr(ev->name, "pmi");
}

static void note_other(struct ks_pmu_trace *pt, const struct tep_event *ev)
{
	char name[64];
	int i;

	snprintf(name, sizeof(name), "%s:%s", ev->system, ev->name);
	for (i = 0; i < pt->sum.nother; i++)
		if (!strcmp(pt->sum.other[i].name, name)) {
			pt->sum.other[i].count++;
			return;
		}
	if (pt->sum.nother < KS_PMU_MAX_SOURCES) {
		snprintf(pt->sum.other[pt->sum.nother].name, sizeof(name), "%s", name);
		pt->sum.other[pt->sum.nother++].count = 1;
	}
}

/* Resolve the kvm events the first time they are seen. */
static void classify(struct ks_pmu_trace *pt, struct tep_event *ev)
{
	int i;

	for (i = 0; i < pt->nseen; i++)
		if (pt->seen[i] == ev)
			return;
	if (pt->nseen < (int)(sizeof(pt->seen) / sizeof(pt->seen[0])))
		pt->seen[pt->nseen++] = ev;
	if (strcmp(ev->system, "kvm"))
		return;
	if (!strcmp(ev->name, "kvm_msr") && !pt->ev_msr) {
		pt->ev_msr = ev;
		ks_field_resolve(&pt->f_ecx, ev, "ecx");
		ks_field_resolve(&pt->f_data, ev, "data");
		ks_field_resolve(&pt->f_write, ev, "write");
		ks_field_resolve(&pt->f_exc, ev, "exception");
	} else if (!strcmp(ev->name, "kvm_exit") && !pt->ev_exit) {
		pt->ev_exit = ev;
		ks_field_resolve(&pt->f_reason, ev, "exit_reason");
		ks_field_resolve(&pt->f_isa, ev, "isa");
	} else if (!strcmp(ev->name, "kvm_entry") && !pt->ev_entry) {
		pt->ev_entry = ev;
		ks_field_resolve(&pt->f_vcpu, ev, "vcpu_id");
	}
}

static struct thread *thread_of(struct ks_pmu_trace *pt, int32_t tid)
{
	bool created;
	size_t i = lookup((void **)&pt->threads, &pt->nthreads, &pt->capthreads,
			  sizeof(*pt->threads), &pt->threadmap, (struct key3){ (uint32_t)tid, 0, 0 },
			  &created);

	if (i == SIZE_MAX)
		return NULL;
	if (created) {
		pt->threads[i].tid = tid;
		pt->threads[i].vcpu = -1;
	}
	return &pt->threads[i];
}

static struct ks_pmu_vcpu *vcpu_of(struct ks_pmu_trace *pt, int32_t vm, int32_t vcpu)
{
	bool created;
	size_t i = lookup((void **)&pt->vcpus, &pt->nvcpus, &pt->capvcpus, sizeof(*pt->vcpus),
			  &pt->vcpumap, (struct key3){ (uint32_t)vm, (uint32_t)vcpu, 0 },
			  &created);

	if (i == SIZE_MAX)
		return NULL;
	if (created) {
		pt->vcpus[i].vm = vm;
		pt->vcpus[i].vcpu = vcpu;
	}
	return &pt->vcpus[i];
}

static size_t row_of(struct ks_pmu_trace *pt, int32_t vm, int32_t vcpu, uint32_t msr)
{
	bool created;
	size_t i = lookup((void **)&pt->rows, &pt->nrows, &pt->caprows, sizeof(*pt->rows),
			  &pt->rowmap, (struct key3){ (uint32_t)vm, (uint32_t)vcpu, msr },
			  &created);

	if (i != SIZE_MAX && created) {
		pt->rows[i].vm = vm;
		pt->rows[i].vcpu = vcpu;
		pt->rows[i].msr = msr;
	}
	return i;
}

static struct ks_pmu_counter *counter_of(struct ks_pmu_trace *pt, int32_t vm, int32_t vcpu,
					 uint32_t msr)
{
	bool created;
	size_t i = lookup((void **)&pt->ctrs, &pt->nctrs, &pt->capctrs, sizeof(*pt->ctrs),
			  &pt->ctrmap, (struct key3){ (uint32_t)vm, (uint32_t)vcpu, msr },
			  &created);

	if (i == SIZE_MAX)
		return NULL;
	if (created) {
		pt->ctrs[i].vm = vm;
		pt->ctrs[i].vcpu = vcpu;
		pt->ctrs[i].msr = msr;
	}
	return &pt->ctrs[i];
}

/* ---- event handlers ---- */
static bool is_pmu_kind(enum ks_msr_kind k)
{
	return k == KS_MSR_PMU_EVTSEL || k == KS_MSR_PMU_COUNTER || k == KS_MSR_PMU_FIXED ||
	       k == KS_MSR_PMU_GLOBAL;
}

static void note_program(struct ks_pmu_trace *pt, const struct thread *t, uint32_t msr,
			 uint64_t data)
{
	struct ks_pmu_counter *c = counter_of(pt, t->vm, t->vcpu, msr);
	uint64_t config = data & ~EVTSEL_EN;
	int i;

	if (!c)
		return;
	if (data & EVTSEL_EN)
		c->enables++;
	else
		c->disables++;
	if (!(data & EVTSEL_EN))
		return;
	for (i = 0; i < c->nprogs; i++)
		if (c->progs[i].config == config) {
			c->progs[i].writes++;
			return;
		}
	if (c->nprogs < KS_PMU_MAX_PROGS) {
		c->progs[c->nprogs].config = config;
		c->progs[c->nprogs++].writes = 1;
	} else {
		c->other_progs++;
	}
}

static void note_lbr(struct ks_pmu_vcpu *v, uint64_t data)
{
	bool on = data & 1;  /* DEBUGCTL.LBR and LBR_CTL.LBREn are both bit 0 */

	if (on && !v->lbr_state)
		v->lbr_on++;
	if (!on && v->lbr_state)
		v->lbr_off++;
	v->lbr_state = on;
}

static void on_msr(struct ks_pmu_trace *pt, struct thread *t, const struct ks_record *rec)
{
	uint32_t msr = (uint32_t)ks_field_u64(&pt->f_ecx, rec);
	uint64_t data = ks_field_u64(&pt->f_data, rec);
	bool write = ks_field_u64(&pt->f_write, rec) != 0;
	bool fault = ks_field_u64(&pt->f_exc, rec) != 0;
	enum ks_msr_kind kind = ks_x86_msr_kind(msr);
	struct ks_pmu_vcpu *v = vcpu_of(pt, t->vm, t->vcpu);
	size_t ri = row_of(pt, t->vm, t->vcpu, msr);
	struct ks_pmu_msr_row *r;

	if (!v || ri == SIZE_MAX)
		return;
	r = &pt->rows[ri];
	v->msr_accesses++;
	v->pmu_accesses += is_pmu_kind(kind);
	v->lbr_accesses += kind == KS_MSR_LBR;
	if (write) {
		r->writes++;
		r->last_write = data;
		r->written = true;
	} else {
		r->reads++;
	}
	r->faults += fault;
	t->msr_ts = rec->ts ? rec->ts : 1;
	t->msr_row = ri;
	if (!write || fault)
		return;
	if (kind == KS_MSR_PMU_EVTSEL)
		note_program(pt, t, msr, data);
	else if (msr == DEBUGCTL_MSR || msr == ARCH_LBR_CTL_MSR)
		note_lbr(v, data);
	else if (msr == 0x38d) {
		v->fixed_ctr_ctrl = data;
		v->fixed_written = true;
	} else if (msr == 0x38f || msr == 0xc0000301) {
		v->global_ctrl = data;
		v->global_written = true;
	}
}

static void on_entry(struct ks_pmu_trace *pt, struct thread *t, const struct ks_record *rec)
{
	t->known = true;
	if (t->msr_ts && rec->ts >= t->msr_ts) {
		struct ks_pmu_msr_row *r = &pt->rows[t->msr_row];
		uint64_t d = rec->ts - t->msr_ts;
		uint64_t e = t->exit_ts && rec->ts >= t->exit_ts && t->exit_ts <= t->msr_ts
				     ? rec->ts - t->exit_ts : d;
		struct ks_pmu_vcpu *v = vcpu_of(pt, r->vm, r->vcpu);
		enum ks_msr_kind kind = ks_x86_msr_kind(r->msr);

		r->timed++;
		r->msr_ns += d;
		r->exit_ns += e;
		if (d > r->max_ns)
			r->max_ns = d;
		if (v && kind != KS_MSR_OTHER) {
			v->pmu_msr_ns += d;
			v->pmu_exit_ns += e;
		}
	}
	t->msr_ts = 0;
	t->exit_ts = 0;
}

static void on_kvm_exit(struct ks_pmu_trace *pt, struct thread *t, const struct ks_record *rec)
{
	uint64_t reason = ks_field_u64(&pt->f_reason, rec);
	int isa = pt->f_isa.present ? (int)ks_field_u64(&pt->f_isa, rec) : pt->sum.isa;
	struct ks_pmu_vcpu *v = vcpu_of(pt, t->vm, t->vcpu);
	enum ks_msr_exit kind = ks_x86_msr_exit(isa, reason);

	if (isa == KS_ISA_VMX || isa == KS_ISA_SVM)
		pt->sum.isa = isa;
	t->exit_ts = rec->ts ? rec->ts : 1;
	t->msr_ts = 0;
	if (kind == KS_MSR_EXIT_ACCESS) {
		pt->sum.msr_exits++;
		if (v)
			v->msr_exits++;
	} else if (kind == KS_MSR_EXIT_RDPMC) {
		pt->sum.rdpmc_exits++;
		if (v)
			v->rdpmc_exits++;
	}
}

static void note_comm(struct ks_pmu_trace *pt, const struct ks_record *rec)
{
	size_t i;

	if (!rec->comm || rec->pid < 0 || rec->tid != rec->pid)
		return;
	for (i = 0; i < pt->ncomms; i++)
		if (pt->comms[i].pid == rec->pid)
			break;
	if (i == pt->ncomms) {
		if (pt->ncomms == pt->capcomms) {
			size_t nc = pt->capcomms ? pt->capcomms * 2 : 16;
			struct comm *n = realloc(pt->comms, nc * sizeof(*n));

			if (!n)
				return;
			pt->comms = n;
			pt->capcomms = nc;
		}
		pt->comms[pt->ncomms++].pid = rec->pid;
	}
	snprintf(pt->comms[i].name, sizeof(pt->comms[i].name), "%s", rec->comm);
}

static bool wanted(const struct ks_pmu_trace *pt, const struct thread *t)
{
	return (pt->cfg.vcpu < 0 || t->vcpu == pt->cfg.vcpu) &&
	       (pt->cfg.pid < 0 || t->vm == pt->cfg.pid);
}

void ks_pmu_trace_add(struct ks_pmu_trace *pt, const struct ks_record *rec)
{
	const struct ks_attr_thread *a;
	struct thread *t;
	struct tep_event *ev = rec->event;

	if (pt->sorted || pt->failed_rec)
		return;
	a = ks_host_observe(pt->host, rec);
	if (!a && ks_host_error(pt->host, NULL) < 0) {
		pt->failed_rec = true;
		pt->failed_offset = rec->offset;
		return;
	}
	if (rec->ts) {
		if (!pt->sum.first_ts || rec->ts < pt->sum.first_ts)
			pt->sum.first_ts = rec->ts;
		if (rec->ts > pt->sum.last_ts)
			pt->sum.last_ts = rec->ts;
	}
	if (rec->type == KS_REC_COMM)
		note_comm(pt, rec);
	if (rec->type != KS_REC_EVENT || !ev)
		return;
	classify(pt, ev);
	if (ev != pt->ev_msr && ev != pt->ev_exit && ev != pt->ev_entry) {
		if (pmu_related_name(ev))
			note_other(pt, ev);
		return;
	}
	pt->sum.kvm_msr += ev == pt->ev_msr;
	pt->sum.kvm_exit += ev == pt->ev_exit;
	pt->sum.kvm_entry += ev == pt->ev_entry;
	t = thread_of(pt, rec->tid);
	if (!t || !a)
		return;
	if (ev == pt->ev_entry)
		on_entry(pt, t, rec);
	/* the host model's VM and vCPU (the entry's vcpu_id included) */
	t->vm = a->vm;
	t->vcpu = a->vcpu;
	if (ev == pt->ev_entry)
		return;
	if (!t->known) {
		pt->sum.before_first_entry++;
		return;
	}
	if (!wanted(pt, t))
		return;
	if (ev == pt->ev_exit)
		on_kvm_exit(pt, t, rec);
	else
		on_msr(pt, t, rec);
}

/* ---- results ---- */
static int cmp_key3(struct key3 a, struct key3 b)
{
	if ((int32_t)a.a != (int32_t)b.a)
		return (int32_t)a.a < (int32_t)b.a ? -1 : 1;
	if ((int32_t)a.b != (int32_t)b.b)
		return (int32_t)a.b < (int32_t)b.b ? -1 : 1;
	return a.c < b.c ? -1 : a.c > b.c;
}

static int cmp_rows(const void *x, const void *y)
{
	return cmp_key3(row_key(x, 0), row_key(y, 0));
}

static int cmp_vcpus(const void *x, const void *y)
{
	return cmp_key3(vcpu_key(x, 0), vcpu_key(y, 0));
}

static int cmp_ctrs(const void *x, const void *y)
{
	return cmp_key3(ctr_key(x, 0), ctr_key(y, 0));
}

/* The first query ends the run: arrays are sorted, later records ignored. */
static void finish(struct ks_pmu_trace *pt)
{
	if (pt->sorted)
		return;
	pt->sorted = true;
	if (pt->nrows)
		qsort(pt->rows, pt->nrows, sizeof(*pt->rows), cmp_rows);
	if (pt->nvcpus)
		qsort(pt->vcpus, pt->nvcpus, sizeof(*pt->vcpus), cmp_vcpus);
	if (pt->nctrs)
		qsort(pt->ctrs, pt->nctrs, sizeof(*pt->ctrs), cmp_ctrs);
}

size_t ks_pmu_trace_msrs(struct ks_pmu_trace *pt, const struct ks_pmu_msr_row **rows)
{
	finish(pt);
	*rows = pt->rows;
	return pt->nrows;
}

size_t ks_pmu_trace_vcpus(struct ks_pmu_trace *pt, const struct ks_pmu_vcpu **vcpus)
{
	finish(pt);
	*vcpus = pt->vcpus;
	return pt->nvcpus;
}

size_t ks_pmu_trace_counters(struct ks_pmu_trace *pt, const struct ks_pmu_counter **ctrs)
{
	finish(pt);
	*ctrs = pt->ctrs;
	return pt->nctrs;
}

const struct ks_pmu_trace_summary *ks_pmu_trace_summary(const struct ks_pmu_trace *pt)
{
	return &pt->sum;
}

const char *ks_pmu_trace_comm(const struct ks_pmu_trace *pt, int32_t pid)
{
	size_t i;

	for (i = 0; i < pt->ncomms; i++)
		if (pt->comms[i].pid == pid)
			return pt->comms[i].name;
	return ks_host_vm_name(pt->host, pid);
}

/* ---- event select ---- */
bool ks_evtsel_msr_is_amd(uint32_t msr)
{
	return (msr >= 0xc0010000 && msr <= 0xc0010003) || (msr >= 0xc0010200 && msr <= 0xc001020b);
}

void ks_evtsel_decode(uint64_t v, bool amd, struct ks_evtsel *e)
{
	memset(e, 0, sizeof(*e));
	e->event = (uint32_t)(v & 0xff);
	if (amd)
		e->event |= (uint32_t)((v >> 32) & 0xf) << 8;
	e->umask = (uint32_t)((v >> 8) & 0xff);
	e->usr = v >> 16 & 1;
	e->os = v >> 17 & 1;
	e->edge = v >> 18 & 1;
	e->intr = v >> 20 & 1;
	e->any = !amd && (v >> 21 & 1);
	e->en = v >> 22 & 1;
	e->inv = v >> 23 & 1;
	e->cmask = (uint32_t)((v >> 24) & 0xff);
	if (amd) {
		e->guest_only = v >> 40 & 1;
		e->host_only = v >> 41 & 1;
	}
}

void ks_evtsel_format(const struct ks_evtsel *e, char *buf, size_t len)
{
	snprintf(buf, len, "event=%#x umask=0x%02x%s%s%s%s%s%s%s%s%s", e->event, e->umask,
		 e->usr ? " usr" : "", e->os ? " os" : "", e->edge ? " edge" : "",
		 e->intr ? " int" : "", e->any ? " any" : "", e->inv ? " inv" : "",
		 e->guest_only ? " guestonly" : "", e->host_only ? " hostonly" : "",
		 e->en ? " en" : "");
	if (e->cmask) {
		size_t n = strlen(buf);

		snprintf(buf + n, len > n ? len - n : 0, " cmask=%u", e->cmask);
	}
}
