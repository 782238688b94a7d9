/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_outfile.c - ks_outfile: what is under the final name after a refusal,
 * an abort and a commit, and what is left in the directory.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/ktest.h"
#include "kvmscope/outfile.h"

static char dir[4096];

static const char *path(const char *name)
{
	static char p[4][4400];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(path(name), "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *get(const char *name)
{
	size_t len;

	return kt_read_file(path(name), &len);
}

/* Entries of dir starting with ".", i.e. temporary files. */
static int hidden(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "%s/outfile-%d", kt_tmpdir(), (int)getpid());
	mkdir(dir, 0700);
}

static void t_commit_replaces(void)
{
	struct ks_outfile *of;
	struct ks_error err;
	char *s;

	setup();
	put("a.txt", "old\n");
	chmod(path("a.txt"), 0640);
	KT_REQUIRE(ks_outfile_open(&of, path("a.txt"), NULL, 0, &err) == 0);
	fputs("new\n", ks_outfile_stream(of));
	s = get("a.txt");
	KT_EQ_STR(s, "old\n"); /* untouched until the commit */
	free(s);
	KT_EQ_INT(hidden(), 1);
	KT_EQ_INT(ks_outfile_commit(of, &err), 0);
	s = get("a.txt");
	KT_EQ_STR(s, "new\n");
	free(s);
	KT_EQ_INT(hidden(), 0);
	{
		struct stat st;
		KT_REQUIRE(stat(path("a.txt"), &st) == 0);
		KT_EQ_INT(st.st_mode & 0777, 0640); /* the replaced file's mode */
	}
}

static void t_abort_keeps_old(void)
{
	struct ks_outfile *of;
	struct ks_error err;
	char *s;

	setup();
	put("b.txt", "old\n");
	KT_REQUIRE(ks_outfile_open(&of, path("b.txt"), NULL, 0, &err) == 0);
	fputs("partial", ks_outfile_stream(of));
	ks_outfile_abort(of);
	s = get("b.txt");
	KT_EQ_STR(s, "old\n");
	free(s);
	KT_EQ_INT(hidden(), 0);
	/* no old file: nothing under the name */
	KT_REQUIRE(ks_outfile_open(&of, path("none.txt"), NULL, 0, &err) == 0);
	ks_outfile_abort(of);
	KT_EXPECT(access(path("none.txt"), F_OK) != 0);
	KT_EQ_INT(hidden(), 0);
}

static void t_refusals(void)
{
	const char *inputs[3];
	struct ks_outfile *of = NULL;
	struct ks_error err;
	char *s;

	setup();
	put("in.dat", "input\n");
	unlink(path("hard.dat"));
	KT_REQUIRE(link(path("in.dat"), path("hard.dat")) == 0);
	inputs[0] = "no-such-input";
	inputs[1] = path("in.dat");
	inputs[2] = NULL;
	KT_EQ_INT(ks_outfile_open(&of, path("in.dat"), inputs, 0, &err), -1);
	KT_EXPECT(strstr(err.msg, "is the input file") != NULL);
	KT_EQ_INT(ks_outfile_open(&of, path("hard.dat"), inputs, 0, &err), -1);
	KT_EQ_INT(ks_outfile_check(path("hard.dat"), inputs, 0, &err), -1);
	/* "FILE@NAME" inputs (merge) are FILE */
	{
		char spec[4300];
		const char *in2[] = { spec, NULL };
		snprintf(spec, sizeof(spec), "%s@guest", path("in.dat"));
		KT_EQ_INT(ks_outfile_check(path("in.dat"), in2, 0, &err), -1);
	}
	KT_EQ_INT(ks_outfile_open(&of, dir, NULL, 0, &err), -1);
	KT_EXPECT(strstr(err.msg, "a directory") != NULL);
	KT_EQ_INT(ks_outfile_open(&of, "-", NULL, KS_OUTFILE_NO_STDOUT, &err), -1);
	KT_EQ_INT(ks_outfile_open(&of, path("no-dir/x"), NULL, 0, &err), -1);
	KT_EXPECT(strstr(err.msg, "cannot create") != NULL);
	s = get("in.dat");
	KT_EQ_STR(s, "input\n");
	free(s);
	KT_EQ_INT(hidden(), 0);
	KT_EXPECT(of == NULL);
}

/* Devices are written in place and stay what they are. */
static void t_devices(void)
{
	struct ks_outfile *of;
	struct ks_error err;
	struct stat st;

	KT_REQUIRE(ks_outfile_open(&of, "/dev/null", NULL, KS_OUTFILE_NO_STDOUT, &err) == 0);
	KT_EXPECT(ks_outfile_temp_path(of) == NULL);
	fputs("discarded\n", ks_outfile_stream(of));
	KT_EQ_INT(ks_outfile_commit(of, &err), 0);
	KT_REQUIRE(stat("/dev/null", &st) == 0);
	KT_EXPECT(S_ISCHR(st.st_mode));
	KT_REQUIRE(ks_outfile_open(&of, "/dev/full", NULL, 0, &err) == 0);
	fputs("no room\n", ks_outfile_stream(of));
	KT_EQ_INT(ks_outfile_commit(of, &err), -1);
	KT_EXPECT(strstr(err.msg, "No space left on device") != NULL);
	KT_REQUIRE(ks_outfile_open(&of, "/dev/full", NULL, 0, &err) == 0);
	ks_outfile_abort(of);
	KT_REQUIRE(stat("/dev/full", &st) == 0);
	KT_EXPECT(S_ISCHR(st.st_mode));
}

/* A FIFO named as output is refused from its stat, before any open: with
 * nobody reading, open(2) would wait for ever (it did: a test with the
 * open in a child process saw it block).  A pipe the program has open
 * already, named /dev/fd/N, is written in place (a shell's >(...)). */
static void t_fifo(void)
{
	struct ks_outfile *of = NULL;
	struct ks_error err;
	char name[64], buf[16];
	int fds[2];
	ssize_t n;

	setup();
	unlink(path("fifo"));
	KT_REQUIRE(mkfifo(path("fifo"), 0600) == 0);
	alarm(10); /* a hang fails the test instead of blocking the suite */
	KT_EQ_INT(ks_outfile_check(path("fifo"), NULL, 0, &err), -1);
	KT_EXPECT(strstr(err.msg, "is a FIFO") != NULL);
	KT_EQ_INT(ks_outfile_open(&of, path("fifo"), NULL, 0, &err), -1);
	KT_EXPECT(strstr(err.msg, "is a FIFO") != NULL);
	KT_EXPECT(of == NULL);
	KT_REQUIRE(pipe(fds) == 0);
	snprintf(name, sizeof(name), "/dev/fd/%d", fds[1]);
	KT_REQUIRE(ks_outfile_open(&of, name, NULL, 0, &err) == 0);
	fputs("through\n", ks_outfile_stream(of));
	KT_EQ_INT(ks_outfile_commit(of, &err), 0);
	n = read(fds[0], buf, sizeof(buf) - 1);
	KT_EQ_INT((int)n, 8);
	close(fds[0]);
	close(fds[1]);
	alarm(0);
	KT_EQ_INT(hidden(), 0);
}

/* Field 22 of /proc/PID/stat, read here (the test's own reading). */
static unsigned long long start_of(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!(f = fopen(path, "r")))
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	p = strrchr(buf, ')');
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* A writer's temporary file names its owner (pid, start time, PID
 * namespace: ".NAME.kvmscope-PID-START-NS.XXXXXX"), and opening an output
 * removes those of dead owners in the directory (a SIGKILLed convert's
 * stayed for ever): a pid that is free, a pid taken by a process started
 * at another time; not a live owner's, nor one of another namespace. */
static void t_dead_owners_temps(void)
{
	struct ks_outfile *of;
	struct ks_error err;
	struct stat st;
	char want[4400], dead[128], reused[128], live[128], otherns[128], plain[128];
	unsigned long long me = start_of(getpid()), ns;
	const char *tmp;
	pid_t child;
	int status;

	setup();
	KT_REQUIRE(stat("/proc/self/ns/pid", &st) == 0);
	ns = (unsigned long long)st.st_ino;
	KT_REQUIRE(ks_outfile_open(&of, path("o.txt"), NULL, 0, &err) == 0);
	tmp = ks_outfile_temp_path(of);
	snprintf(want, sizeof(want), "%s/.o.txt.kvmscope-%d-%llu-%llu.", dir, (int)getpid(), me, ns);
	KT_EXPECT(tmp && !strncmp(tmp, want, strlen(want)) && strlen(tmp) == strlen(want) + 6);
	ks_outfile_abort(of);
	/* a pid that was used and is free now */
	child = fork();
	if (child == 0)
		_exit(0);
	KT_REQUIRE(child > 0 && waitpid(child, &status, 0) == child);
	snprintf(dead, sizeof(dead), ".a.dat.kvmscope-%d-%llu-%llu.Ab12Cd", (int)child, me, ns);
	snprintf(reused, sizeof(reused), ".b.dat.kvmscope-%d-%llu-%llu.Ab12Cd", (int)getpid(),
		 me + 1, ns);
	snprintf(live, sizeof(live), ".c.dat.kvmscope-%d-%llu-%llu.Ab12Cd", (int)getpid(), me, ns);
	snprintf(otherns, sizeof(otherns), ".d.dat.kvmscope-%d-%llu-%llu.Ab12Cd", (int)child, me,
		 ns + 1);
	snprintf(plain, sizeof(plain), ".e.dat.Ab12Cd");
	put(dead, "x");
	put(reused, "x");
	put(live, "x");
	put(otherns, "x");
	put(plain, "x");
	KT_REQUIRE(ks_outfile_open(&of, path("o.txt"), NULL, 0, &err) == 0);
	ks_outfile_abort(of);
	KT_EXPECT(access(path(dead), F_OK) < 0);
	KT_EXPECT(access(path(reused), F_OK) < 0);
	KT_EXPECT(access(path(live), F_OK) == 0);
	KT_EXPECT(access(path(otherns), F_OK) == 0);
	KT_EXPECT(access(path(plain), F_OK) == 0);
	unlink(path(live));
	unlink(path(otherns));
	unlink(path(plain));
}

static void t_keep_old(void)
{
	struct ks_outfile *of;
	struct ks_error err;
	char *s;

	setup();
	put("r.dat", "first\n");
	KT_REQUIRE(ks_outfile_open(&of, path("r.dat"), NULL, KS_OUTFILE_KEEP_OLD, &err) == 0);
	fputs("second\n", ks_outfile_stream(of));
	KT_EQ_INT(ks_outfile_commit(of, &err), 0);
	s = get("r.dat");
	KT_EQ_STR(s, "second\n");
	free(s);
	s = get("r.dat.old");
	KT_EQ_STR(s, "first\n");
	free(s);
}

static void t_symlink_target(void)
{
	struct ks_outfile *of;
	struct ks_error err;
	struct stat st;
	char *s;

	setup();
	put("target.txt", "old\n");
	unlink(path("link.txt"));
	KT_REQUIRE(symlink("target.txt", path("link.txt")) == 0);
	KT_REQUIRE(ks_outfile_open(&of, path("link.txt"), NULL, 0, &err) == 0);
	fputs("new\n", ks_outfile_stream(of));
	KT_EQ_INT(ks_outfile_commit(of, &err), 0);
	KT_REQUIRE(lstat(path("link.txt"), &st) == 0);
	KT_EXPECT(S_ISLNK(st.st_mode));
	s = get("target.txt");
	KT_EQ_STR(s, "new\n");
	free(s);
	/* a dangling link is refused */
	unlink(path("dangling.txt"));
	KT_REQUIRE(symlink("missing.txt", path("dangling.txt")) == 0);
	KT_EQ_INT(ks_outfile_open(&of, path("dangling.txt"), NULL, 0, &err), -1);
}

static void t_write_error(void)
{
	struct ks_outfile *of;
	struct ks_error err;
	struct rlimit old, small;
	char block[4096];
	int i;

	setup();
	put("e.txt", "old\n");
	/* a file size limit makes writes fail (EFBIG) as a full disk would */
	KT_REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
	small = old;
	small.rlim_cur = 16384;
	signal(SIGXFSZ, SIG_IGN);
	KT_REQUIRE(ks_outfile_open(&of, path("e.txt"), NULL, 0, &err) == 0);
	KT_REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
	memset(block, 'x', sizeof(block));
	for (i = 0; i < 64; i++)
		fwrite(block, 1, sizeof(block), ks_outfile_stream(of));
	KT_EQ_INT(ks_outfile_commit(of, &err), -1);
	setrlimit(RLIMIT_FSIZE, &old);
	KT_EXPECT(strstr(err.msg, "write error: File too large") != NULL);
	{
		char *s = get("e.txt");
		KT_EQ_STR(s, "old\n");
		free(s);
	}
	KT_EQ_INT(hidden(), 0);
}

int main(void)
{
	static const struct kt_case cases[] = {
		KT_CASE(t_commit_replaces), KT_CASE(t_abort_keeps_old), KT_CASE(t_refusals),
		KT_CASE(t_devices), KT_CASE(t_fifo), KT_CASE(t_dead_owners_temps),
		KT_CASE(t_keep_old), KT_CASE(t_symlink_target),
		KT_CASE(t_write_error),
		{ NULL, NULL },
	};

	return kt_main(cases);
}
