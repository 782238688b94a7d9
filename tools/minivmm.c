/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * minivmm.c - a minimal VMM on /dev/kvm: the nested lab's workload whose
 * exits are known exactly from its own code (tests/lab/nested_test.sh).
 *
 *   minivmm [--vms N] [--vcpus N] [--loops N] [--ticks N] [--move N] [--io-only]
 *
 * Each VM is its own process (named "minivmm-vmV", so the VM is the
 * process), with the in-kernel irqchip and one thread per vCPU (named
 * "vmV-vcpuC").  Every vCPU runs the same 32-bit flat protected-mode loop,
 * --loops times:
 *   out 0xe9          KVM_EXIT_IO (user space)
 *   mov from/to 2 MB  two KVM_EXIT_MMIO (no memory slot there)
 *   cpuid             handled in the kernel
 *   rdmsr, wrmsr      IA32_APIC_BASE (0x1b), read and written back: kernel
 *   LAPIC timer       one-shot, --ticks bus cycles (1 ns each in KVM;
 *                     default 2 ms, long enough to halt under TCG)
 *   sti; hlt          halts until the timer's interrupt (vector 0x40) wakes
 *                     it; the handler writes the LAPIC EOI and irets
 * then `out 0xe8` (done).  Every --move loops the vCPU thread is moved to
 * the next CPU (sched_setaffinity).  At the end one JSON document on stdout:
 * per VM its pid, per vCPU its tid and the exact counts of what it made:
 * "io" and "mmio" are KVM_RUN returns counted here; "cpuid", "msr" (rdmsr +
 * wrmsr) and "hlt" are the instructions the loop executed, each one exit;
 * "kvm_stats" are KVM's own halt_* statistics of the vCPU (KVM_GET_STATS_FD)
 * read after its last KVM_RUN, histograms as arrays.
 * Extra exits (host interrupts, nested page faults, the LAPIC's MMIO) are
 * not the VMM's to count.  Exit 1 with a message on any failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MEM_SIZE 0x100000ul	/* guest RAM: [0, 1 MB) */
#define GDT_GPA 0x0000ul
#define IDT_GPA 0x0800ul
#define CODE_GPA 0x1000ul
#define STACK_GPA 0x10000ul	/* + (vcpu + 1) * 4 KB */
#define MMIO_GPA 0x200000ul	/* unbacked: every access exits to user space */
#define MAX_VMS 8
#define MAX_VCPUS 8
#define PORT_LOOP 0xe9
#define PORT_DONE 0xe8
#define PORT_BAD 0xeb

/* The guest: copied to CODE_GPA, entered in 32-bit flat protected mode
 * with esi = loops and edi = timer ticks. */
extern const unsigned char guest_start[], guest_irq[], guest_spurious[],
	guest_bad[], guest_io[], guest_end[];
/* --io-only: each loop is the `out 0xe9` alone (a steady load of exits to
 * user space, for a KVM that cannot run the whole loop: a software one) */
static int io_only;
__asm__(".pushsection .rodata\n"
	".code32\n"
	"guest_start:\n"
	"	movl $0x1ff, 0xfee000f0\n"	/* SVR: APIC on, spurious 0xff */
	"	movl $0xb, 0xfee003e0\n"	/* timer divide by 1 */
	"	movl $0x40, 0xfee00320\n"	/* LVT timer: one-shot, vector 0x40 */
	"1:	movl %esi, %eax\n"
	"	outb %al, $0xe9\n"
	"	movl 0x200000, %eax\n"
	"	movl %eax, 0x200004\n"
	"	xorl %eax, %eax\n"
	"	cpuid\n"
	"	movl $0x1b, %ecx\n"
	"	rdmsr\n"
	"	wrmsr\n"
	"	movl %edi, 0xfee00380\n"	/* arm the timer */
	"	sti\n"
	"	hlt\n"
	"	cli\n"
	"	decl %esi\n"
	"	jnz 1b\n"
	"	outb %al, $0xe8\n"
	"2:	hlt\n"
	"	jmp 2b\n"
	"guest_irq:\n"
	"	movl $0, 0xfee000b0\n"		/* EOI */
	"	iret\n"
	"guest_spurious:\n"
	"	iret\n"
	"guest_bad:\n"
	"	outb %al, $0xeb\n"
	"	jmp guest_bad\n"
	"guest_io:\n"				/* --io-only: the out loop alone */
	"1:	outb %al, $0xe9\n"
	"	decl %esi\n"
	"	jnz 1b\n"
	"	outb %al, $0xe8\n"
	"2:	hlt\n"
	"	jmp 2b\n"
	"guest_end:\n"
	".code64\n"
	".popsection\n");

#define MAX_KSTATS 12	/* halt statistics kept per vCPU */
#define KSTAT_VALS 32	/* values of one (a histogram has 32 buckets) */

struct kstat {
	char name[40];
	int n;			/* values: 1, or a histogram's buckets */
	uint64_t v[KSTAT_VALS];
};

struct vcpu_counts {
	int32_t tid;
	int bad;		/* the guest took an unexpected exception */
	uint64_t io, mmio, other, cpuid, msr, hlt;
	uint64_t kicks;		/* signals the watchdog sent it (see run_vm) */
	int nkstats;		/* KVM's halt_* statistics after its last KVM_RUN */
	struct kstat kstats[MAX_KSTATS];
};

struct vm_counts {
	int32_t pid;
	int failed;
	struct vcpu_counts vcpu[MAX_VCPUS];
};

struct vcpu_ctx {
	int vm, idx, fd;
	struct kvm_run *run;
	unsigned long loops, move;
	struct vcpu_counts *out;
	unsigned long progress;	/* KVM_RUN returns, read by the watchdog */
	unsigned long loops_done; /* the guest's `out 0xe9` (one a loop) */
	int vmfd;
	int done;
	char err[160];
};

static int ncpus_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

static void move_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* best effort: a CPU may be offline or outside our cpuset */
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* KVM's own statistics of the vCPU (KVM_GET_STATS_FD, the binary stats
 * QEMU's query-stats reads too): the halt_* ones, into o->kstats.  Read
 * after the vCPU's last KVM_RUN, they cover its whole life: a new vCPU's
 * statistics start at 0.  Best effort: none on kernels without it. */
static void read_halt_stats(int vcpufd, struct vcpu_counts *o)
{
	struct kvm_stats_header h;
	char *desc = NULL;
	size_t dsz;
	int fd = ioctl(vcpufd, KVM_GET_STATS_FD, NULL);

	if (fd < 0)
		return;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.num_desc > 4096 ||
	    h.name_size > 256)
		goto out;
	dsz = sizeof(struct kvm_stats_desc) + h.name_size;
	desc = malloc(dsz * h.num_desc);
	if (!desc || pread(fd, desc, dsz * h.num_desc, h.desc_offset) != (ssize_t)(dsz * h.num_desc))
		goto out;
	for (uint32_t i = 0; i < h.num_desc && o->nkstats < MAX_KSTATS; i++) {
		const struct kvm_stats_desc *d = (const void *)(desc + i * dsz);
		struct kstat *k = &o->kstats[o->nkstats];
		size_t n = d->size < KSTAT_VALS ? d->size : KSTAT_VALS;

		if (strncmp(d->name, "halt_", 5) || !n)
			continue;
		snprintf(k->name, sizeof(k->name), "%.*s", (int)h.name_size, d->name);
		if (pread(fd, k->v, n * 8, (off_t)h.data_offset + d->offset) != (ssize_t)(n * 8))
			continue;
		k->n = (int)n;
		o->nkstats++;
	}
out:
	free(desc);
	close(fd);
}

static void *vcpu_thread(void *arg)
{
	struct vcpu_ctx *c = arg;
	struct vcpu_counts *o = c->out;
	char name[32]; /* a thread name: at most 15 characters */
	int ncpu = ncpus_online(), cpu = c->idx % ncpu;

	snprintf(name, sizeof(name), "vm%d-vcpu%d", c->vm, c->idx);
	name[15] = 0;
	pthread_setname_np(pthread_self(), name);
	o->tid = (int32_t)gettid();
	move_to(cpu);
	for (;;) {
		int rr = ioctl(c->fd, KVM_RUN, 0);

		__atomic_fetch_add(&c->progress, 1, __ATOMIC_RELAXED);
		if (rr < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				o->other++;
				continue;
			}
			snprintf(c->err, sizeof(c->err), "KVM_RUN: %s", strerror(errno));
			return NULL;
		}
		struct kvm_run *r = c->run;

		switch (r->exit_reason) {
		case KVM_EXIT_IO:
			o->io++;
			__atomic_fetch_add(&c->loops_done, 1, __ATOMIC_RELAXED);
			if (r->io.port == PORT_DONE) {
				o->cpuid = o->hlt = io_only ? 0 : c->loops;
				o->msr = io_only ? 0 : 2 * c->loops;
				read_halt_stats(c->fd, o);
				return NULL;
			}
			if (r->io.port == PORT_BAD) {
				o->bad = 1;
				snprintf(c->err, sizeof(c->err), "guest exception");
				return NULL;
			}
			if (r->io.port != PORT_LOOP) {
				snprintf(c->err, sizeof(c->err), "I/O to port 0x%x", r->io.port);
				return NULL;
			}
			if (c->move && o->io % c->move == 0)
				move_to(cpu = (cpu + 1) % ncpu);
			break;
		case KVM_EXIT_MMIO:
			o->mmio++;
			if (!r->mmio.is_write)
				memcpy(r->mmio.data, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
			break;
		case KVM_EXIT_INTERNAL_ERROR:
			snprintf(c->err, sizeof(c->err), "internal error, suberror %u",
				 r->internal.suberror);
			return NULL;
		default:
			snprintf(c->err, sizeof(c->err), "exit reason %u", r->exit_reason);
			return NULL;
		}
	}
}

static void *vcpu_main(void *arg)
{
	struct vcpu_ctx *c = arg;
	void *r = vcpu_thread(arg);

	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return r;
}

static void on_kick(int sig)
{
	(void)sig; /* only to make KVM_RUN return EINTR */
}

/* Watchdog: a vCPU whose KVM_RUN has not returned for 5 s (a halt whose
 * wakeup was lost: seen once under a heavily loaded TCG) is sent SIGUSR1,
 * which makes KVM_RUN return (EINTR, counted in other_returns) and enter
 * again; after 60 s without progress the VM fails.  A vCPU whose guest has
 * not looped for 5 s although KVM_RUN returns (the kicks: its timer's
 * interrupt is lost, not pending, in the nested lab's TCG-emulated SVM)
 * also gets the timer's vector again as an MSI to its LAPIC, so that the
 * halt ends as the timer would have ended it (counted in kicks). */
static int watch(struct vcpu_ctx *ctx, pthread_t *th, int n)
{
	unsigned long last[MAX_VCPUS] = { 0 }, last_loops[MAX_VCPUS] = { 0 };
	int still[MAX_VCPUS] = { 0 }, stuck[MAX_VCPUS] = { 0 }, i, running;

	for (;;) {
		sleep(1);
		running = 0;
		for (i = 0; i < n; i++) {
			unsigned long p = __atomic_load_n(&ctx[i].progress, __ATOMIC_RELAXED);

			if (__atomic_load_n(&ctx[i].done, __ATOMIC_ACQUIRE))
				continue;
			running++;
			unsigned long lp = __atomic_load_n(&ctx[i].loops_done, __ATOMIC_RELAXED);

			still[i] = p == last[i] ? still[i] + 1 : 0;
			last[i] = p;
			stuck[i] = lp == last_loops[i] ? stuck[i] + 1 : 0;
			last_loops[i] = lp;
			if (!io_only && stuck[i] && stuck[i] % 5 == 0) {
				struct kvm_msi msi = {
					.address_lo = 0xfee00000u | (uint32_t)i << 12,
					.data = 0x40,
				};

				if (ioctl(ctx[i].vmfd, KVM_SIGNAL_MSI, &msi) >= 0)
					ctx[i].out->kicks++;
			}
			if (still[i] >= 60) {
				fprintf(stderr, "minivmm: vm%d vcpu%d: no exit in 60 s\n",
					ctx[i].vm, i);
				return -1;
			}
			if (still[i] && still[i] % 5 == 0) {
				ctx[i].out->kicks++;
				pthread_kill(th[i], SIGUSR1);
			}
		}
		if (!running)
			return 0;
	}
}

static void put_gate(unsigned char *mem, int vec, uint32_t off)
{
	uint64_t g = (off & 0xffffu) | (0x08ull << 16) | (0x8eull << 40) |
		((uint64_t)(off >> 16) << 48);

	memcpy(mem + IDT_GPA + 8 * vec, &g, 8);
}

static void set_seg(struct kvm_segment *s, uint16_t sel, uint8_t type)
{
	memset(s, 0, sizeof(*s));
	s->base = 0;
	s->limit = 0xffffffff;
	s->selector = sel;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->db = 1;
	s->g = 1;
}

static int die(const char *what)
{
	fprintf(stderr, "minivmm: %s: %s\n", what, strerror(errno));
	return 1;
}

/* One VM in this process; counts into *vc. */
static int run_vm(int vm, int nvcpu, unsigned long loops, unsigned long ticks,
		  unsigned long move, struct vm_counts *vc)
{
	int kvm, vmfd, i, rc = 0;
	long runsz;
	unsigned char *mem;
	struct vcpu_ctx ctx[MAX_VCPUS];
	pthread_t th[MAX_VCPUS];
	char name[32]; /* PR_SET_NAME keeps 15 characters */

	snprintf(name, sizeof(name), "minivmm-vm%d", vm);
	prctl(PR_SET_NAME, name);
	vc->pid = (int32_t)getpid();
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return die("/dev/kvm");
	vmfd = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vmfd < 0)
		return die("KVM_CREATE_VM");
	if (ioctl(vmfd, KVM_CREATE_IRQCHIP, 0) < 0)
		return die("KVM_CREATE_IRQCHIP");
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return die("mmap");
	struct kvm_userspace_memory_region reg = {
		.slot = 0, .guest_phys_addr = 0, .memory_size = MEM_SIZE,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vmfd, KVM_SET_USER_MEMORY_REGION, &reg) < 0)
		return die("KVM_SET_USER_MEMORY_REGION");
	/* GDT: null, flat code (0x08), flat data (0x10) */
	uint64_t gdt[3] = { 0, 0x00cf9a000000ffffull, 0x00cf92000000ffffull };
	memcpy(mem + GDT_GPA, gdt, sizeof(gdt));
	memcpy(mem + CODE_GPA, guest_start, (size_t)(guest_end - guest_start));
	for (i = 0; i < 256; i++)
		put_gate(mem, i, (uint32_t)(CODE_GPA + (guest_bad - guest_start)));
	put_gate(mem, 0x40, (uint32_t)(CODE_GPA + (guest_irq - guest_start)));
	put_gate(mem, 0xff, (uint32_t)(CODE_GPA + (guest_spurious - guest_start)));
	runsz = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (runsz <= 0)
		return die("KVM_GET_VCPU_MMAP_SIZE");
	for (i = 0; i < nvcpu; i++) {
		struct kvm_sregs sr;
		struct kvm_regs rg;
		struct vcpu_ctx *c = &ctx[i];

		memset(c, 0, sizeof(*c));
		c->vm = vm;
		c->idx = i;
		c->loops = loops;
		c->move = move;
		c->out = &vc->vcpu[i];
		c->vmfd = vmfd;
		c->fd = ioctl(vmfd, KVM_CREATE_VCPU, i);
		if (c->fd < 0)
			return die("KVM_CREATE_VCPU");
		c->run = mmap(NULL, (size_t)runsz, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
		if (c->run == MAP_FAILED)
			return die("mmap kvm_run");
		if (ioctl(c->fd, KVM_GET_SREGS, &sr) < 0)
			return die("KVM_GET_SREGS");
		set_seg(&sr.cs, 0x08, 11);
		set_seg(&sr.ds, 0x10, 3);
		sr.es = sr.fs = sr.gs = sr.ss = sr.ds;
		sr.gdt.base = GDT_GPA;
		sr.gdt.limit = sizeof(gdt) - 1;
		sr.idt.base = IDT_GPA;
		sr.idt.limit = 256 * 8 - 1;
		sr.cr0 = 0x11;	/* PE, ET */
		if (ioctl(c->fd, KVM_SET_SREGS, &sr) < 0)
			return die("KVM_SET_SREGS");
		memset(&rg, 0, sizeof(rg));
		rg.rip = CODE_GPA + (io_only ? (uint64_t)(guest_io - guest_start) : 0);
		rg.rflags = 2;
		rg.rsp = STACK_GPA + (uint64_t)(i + 1) * 0x1000;
		rg.rsi = loops;
		rg.rdi = ticks;
		if (ioctl(c->fd, KVM_SET_REGS, &rg) < 0)
			return die("KVM_SET_REGS");
		/* with the in-kernel LAPIC the vCPUs after the first wait for
		 * INIT/SIPI: start them all at CODE_GPA at once */
		struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
		if (ioctl(c->fd, KVM_SET_MP_STATE, &mp) < 0)
			return die("KVM_SET_MP_STATE");
	}
	struct sigaction sa = { .sa_handler = on_kick };
	sigaction(SIGUSR1, &sa, NULL); /* no SA_RESTART: KVM_RUN returns EINTR */
	for (i = 0; i < nvcpu; i++)
		if (pthread_create(&th[i], NULL, vcpu_main, &ctx[i]) != 0) {
			fprintf(stderr, "minivmm: pthread_create failed\n");
			return 1;
		}
	if (watch(ctx, th, nvcpu) < 0)
		return 1; /* the stuck thread dies with the process */
	for (i = 0; i < nvcpu; i++) {
		pthread_join(th[i], NULL);
		if (ctx[i].err[0]) {
			fprintf(stderr, "minivmm: vm%d vcpu%d: %s\n", vm, i, ctx[i].err);
			rc = 1;
		}
	}
	return rc;
}

static unsigned long num_arg(const char *opt, const char *v, unsigned long max)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v ? v : "", &end, 10);
	if (!v || errno || *end || end == v || n == 0 || n > max) {
		fprintf(stderr, "minivmm: %s wants a number 1..%lu\n", opt, max);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned long vms = 2, vcpus = 2, loops = 1000, ticks = 2000000, move = 16;
	struct vm_counts *all;
	pid_t pids[MAX_VMS];
	int i, j, rc = 0;

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--vms"))
			vms = num_arg(argv[i], v, MAX_VMS);
		else if (!strcmp(argv[i], "--vcpus"))
			vcpus = num_arg(argv[i], v, MAX_VCPUS);
		else if (!strcmp(argv[i], "--loops"))
			loops = num_arg(argv[i], v, 1ul << 30);
		else if (!strcmp(argv[i], "--ticks"))
			ticks = num_arg(argv[i], v, 0xffffffffu);
		else if (!strcmp(argv[i], "--move"))
			move = num_arg(argv[i], v, 1ul << 30);
		else if (!strcmp(argv[i], "--io-only")) {
			io_only = 1;
			continue;
		} else {
			fprintf(stderr, "usage: minivmm [--vms N] [--vcpus N] [--loops N] [--ticks N] [--move N] [--io-only]\n");
			return 2;
		}
		i++;
	}
	all = mmap(NULL, sizeof(*all) * MAX_VMS, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (all == MAP_FAILED)
		return die("mmap");
	fflush(stdout);
	for (i = 0; i < (int)vms; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return die("fork");
		if (pids[i] == 0)
			_exit(run_vm(i, (int)vcpus, loops, ticks, move, &all[i]));
	}
	for (i = 0; i < (int)vms; i++) {
		int st;

		if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "minivmm: vm%d failed\n", i);
			rc = 1;
		}
	}
	printf("{\"loops\": %lu, \"ticks\": %lu, \"vms\": [", loops, ticks);
	for (i = 0; i < (int)vms; i++) {
		printf("%s\n {\"vm\": %d, \"comm\": \"minivmm-vm%d\", \"pid\": %d, \"vcpus\": [",
		       i ? "," : "", i, i, (int)all[i].pid);
		for (j = 0; j < (int)vcpus; j++) {
			const struct vcpu_counts *o = &all[i].vcpu[j];

			printf("%s\n  {\"vcpu\": %d, \"tid\": %d, \"comm\": \"vm%d-vcpu%d\", "
			       "\"io\": %llu, \"mmio\": %llu, \"cpuid\": %llu, \"msr\": %llu, "
			       "\"hlt\": %llu, \"other_returns\": %llu, \"kicks\": %llu, \"kvm_stats\": {",
			       j ? "," : "", j, (int)o->tid, i, j, (unsigned long long)o->io,
			       (unsigned long long)o->mmio, (unsigned long long)o->cpuid,
			       (unsigned long long)o->msr, (unsigned long long)o->hlt,
			       (unsigned long long)o->other, (unsigned long long)o->kicks);
			for (int k = 0; k < o->nkstats; k++) {
				const struct kstat *ks = &o->kstats[k];

				printf("%s\"%s\": ", k ? ", " : "", ks->name);
				if (strstr(ks->name, "_hist"))
					putchar('[');
				for (int b = 0; b < ks->n; b++)
					printf("%s%llu", b ? ", " : "", (unsigned long long)ks->v[b]);
				if (strstr(ks->name, "_hist"))
					putchar(']');
			}
			printf("}}");
		}
		printf("]}");
	}
	printf("]}\n");
	return rc;
}
