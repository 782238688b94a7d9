/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * outfile.c - output files written to a temporary file and renamed over
 * the final name when complete (API and rules in include/kvmscope/outfile.h).
 *
 * Why: opening the final name with "w" truncates it before anything is
 * known about the run; a broken input, a full disk or a kill then leaves a
 * damaged or empty file where the old one was, and removing a "partly
 * written" path on failure can delete what the user named (a device node,
 * the input itself).  Here the final name changes exactly once, by
 * rename(2), after the data is on disk.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kvmscope/outfile.h"
#include "procfs.h"

struct ks_outfile {
	char *path;      /* as given (for messages) */
	char *final;     /* where the rename goes (a symlink's target) */
	char *temp;      /* NULL for standard output and devices */
	bool direct;     /* an existing device or pipe, written in place */
	FILE *f;
	int fd;
	int werr;        /* the first write error's errno (stdio keeps only a flag) */
	unsigned flags;
};

/* The stream over the temporary file is a cookie stream: the same as a
 * plain one, but it remembers why a write failed, so that a full disk is
 * reported as such however the writer flushed. */
static ssize_t ck_read(void *c, char *buf, size_t n)
{
	struct ks_outfile *of = c;
	ssize_t r;

	do
		r = read(of->fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

static ssize_t ck_write(void *c, const char *buf, size_t n)
{
	struct ks_outfile *of = c;
	size_t done = 0;

	while (done < n) {
		ssize_t r = write(of->fd, buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (!of->werr)
				of->werr = r < 0 ? errno : ENOSPC;
			break;
		}
		done += (size_t)r;
	}
	return (ssize_t)done; /* short: stdio marks the stream as failed */
}

static int ck_seek(void *c, off64_t *pos, int whence)
{
	struct ks_outfile *of = c;
	off_t r = lseek(of->fd, (off_t)*pos, whence);

	if (r < 0)
		return -1;
	*pos = (off64_t)r;
	return 0;
}

static int ck_close(void *c)
{
	struct ks_outfile *of = c;
	int r = close(of->fd);

	of->fd = -1;
	return r;
}

static bool is_stdout(const char *path)
{
	return !strcmp(path, "-");
}

/* A name of a descriptor the program already has (/dev/stdout, a shell's
 * /dev/fd/63 for >(...)): whatever it is, it is open at the other end. */
static bool names_open_fd(const char *path)
{
	return !strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr") ||
	       !strncmp(path, "/dev/fd/", 8) || !strncmp(path, "/proc/self/fd/", 14) ||
	       !strncmp(path, "/proc/thread-self/fd/", 21);
}

/* The name the rename replaces: PATH, or the target of a symbolic link.
 * Returns a malloc'ed string, or NULL with err set. */
static char *final_name(const char *path, struct ks_error *err)
{
	struct stat st;
	char *r;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		r = realpath(path, NULL);
		if (!r)
			ks_error_code(err, KS_E_IO, "%s: a symbolic link to %s: %s", path,
				     errno == ENOENT ? "a missing file" : "a path that cannot be resolved",
				     errno == ENOENT ? "name a regular file" : strerror(errno));
		return r;
	}
	r = strdup(path);
	if (!r)
		ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	return r;
}

/* stat() an input; "FILE@NAME" (merge and timeline inputs) is tried as FILE. */
static int stat_input(const char *in, struct stat *st)
{
	const char *at;
	char buf[PATH_MAX];

	if (stat(in, st) == 0)
		return 0;
	at = strrchr(in, '@');
	if (!at || (size_t)(at - in) >= sizeof(buf) || at == in)
		return -1;
	memcpy(buf, in, (size_t)(at - in));
	buf[at - in] = '\0';
	return stat(buf, st);
}

int ks_outfile_check(const char *path, const char *const *inputs, unsigned flags,
		     struct ks_error *err)
{
	struct stat st, ist;
	size_t i;

	if (!path || !*path)
		return ks_error_set(err, "no output file named");
	if (is_stdout(path)) {
		if (flags & KS_OUTFILE_NO_STDOUT)
			return ks_error_set(err, "this output cannot go to standard output ('-'): "
					    "it is written with seeks; name a regular file");
		return 0;
	}
	if (stat(path, &st) < 0) {
		if (errno == ENOENT) {
			struct stat lst;
			if (lstat(path, &lst) == 0)
				return ks_error_set(err, "%s: a symbolic link to a missing file; "
						    "name a regular file", path);
			return 0; /* a new file; the directory is checked by open */
		}
		return ks_error_code(err, KS_E_IO, "%s: %s", path, strerror(errno));
	}
	/* a FIFO nobody reads blocks open(2) for ever, and cannot be written
	 * atomically: refused here, before any open (from stat alone) */
	if (S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode) ||
	    (S_ISFIFO(st.st_mode) && !names_open_fd(path)))
		return ks_error_set(err, "%s: %s; kvmscope writes outputs to regular files (renamed "
				    "into place when complete), character devices such as "
				    "/dev/null or standard output ('-', /dev/stdout)", path,
				    S_ISDIR(st.st_mode) ? "is a directory" :
				    S_ISBLK(st.st_mode) ? "is a block device" :
				    S_ISSOCK(st.st_mode) ? "is a socket" : "is a FIFO");
	for (i = 0; inputs && inputs[i]; i++)
		if (stat_input(inputs[i], &ist) == 0 && ist.st_dev == st.st_dev &&
		    ist.st_ino == st.st_ino)
			return ks_error_set(err, "%s: is the input file %s; choose another output",
					    path, inputs[i]);
	return 0;
}

/* The owner of a temporary file NAME: ".BASE.kvmscope-PID-START-PIDNS.XXXXXX"
 * (procfs.h).  False for any other name. */
static bool temp_owner(const char *name, struct ks_proc_id *id)
{
	const char *p = name, *k = NULL;
	unsigned long long start, ns;
	int pid, end = 0;

	if (name[0] != '.')
		return false;
	while ((p = strstr(p, ".kvmscope-")))
		k = p++;
	/* the six characters of the suffix, then the end */
	if (!k || sscanf(k, ".kvmscope-%d-%llu-%llu.%*6[a-zA-Z0-9]%n", &pid, &start, &ns, &end) != 3 ||
	    !end || k[end] || strlen(strrchr(k, '.') + 1) != 6 || pid <= 0)
		return false;
	*id = (struct ks_proc_id){ .pid = pid, .start = start, .pidns = ns };
	return true;
}

/* Remove the temporary files a writer killed before it could (SIGKILL, a
 * crash) left in DIR: those of this user whose owner is provably gone
 * (ks_proc_id_dead: same PID namespace, pid free or reused).  A live
 * writer's, another user's, or one of another namespace stays. */
static void remove_dead_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int dfd;

	if (!d)
		return;
	dfd = dirfd(d);
	while ((e = readdir(d))) {
		struct ks_proc_id id;
		struct stat st;

		if (temp_owner(e->d_name, &id) &&
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid() && ks_proc_id_dead(&id))
			(void)unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
}

/* ".NAME.kvmscope-PID-START-PIDNS.XXXXXX" next to FINAL, created with
 * O_EXCL: the name says whose it is (temp_owner), so that a run after a
 * killed one removes it (remove_dead_temps). */
static int create_temp(struct ks_outfile *of, struct ks_error *err)
{
	const char *slash = strrchr(of->final, '/');
	size_t dlen = slash ? (size_t)(slash - of->final) + 1 : 0;
	const char *base = slash ? slash + 1 : of->final;
	struct ks_proc_id self = { .pid = (int32_t)getpid() };
	char owner[80];
	size_t size;
	struct stat st;
	int fd = -1, tries;

	(void)ks_proc_id_of(0, &self); /* else START and PIDNS 0: never taken for dead */
	snprintf(owner, sizeof(owner), "kvmscope-%d-%llu-%llu", (int)self.pid,
		 (unsigned long long)self.start, (unsigned long long)self.pidns);
	{
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%.*s", dlen ? (int)dlen : 1, dlen ? of->final : ".");
		remove_dead_temps(dir);
	}
	size = dlen + strlen(base) + strlen(owner) + 16;
	of->temp = malloc(size);
	if (!of->temp)
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", of->path);
	for (tries = 0; tries < 100 && fd < 0; tries++) {
		static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
		unsigned char rnd[6];
		char suffix[7];
		struct timespec ts;
		int k;

		if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			for (k = 0; k < 6; k++)
				rnd[k] = (unsigned char)((unsigned long)ts.tv_nsec >> (k * 5)) ^
					 (unsigned char)(getpid() >> k) ^ (unsigned char)(tries * 7);
		}
		for (k = 0; k < 6; k++)
			suffix[k] = digits[rnd[k] % (sizeof(digits) - 1)];
		suffix[6] = '\0';
		snprintf(of->temp, size, "%.*s.%s.%s.%s", (int)dlen, of->final, base, owner, suffix);
		/* 0666 & ~umask, as fopen("w") would create the file */
		fd = open(of->temp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int e = errno;
		free(of->temp);
		of->temp = NULL;
		return ks_error_set(err, "%s: cannot create: %s", of->path, strerror(e));
	}
	/* replacing a file keeps its permission bits */
	if (stat(of->final, &st) == 0 && S_ISREG(st.st_mode))
		(void)fchmod(fd, st.st_mode & 07777);
	of->fd = fd;
	of->f = fopencookie(of, "w+b", (cookie_io_functions_t){ ck_read, ck_write, ck_seek,
								 ck_close });
	if (!of->f) {
		int e = errno;
		close(fd);
		unlink(of->temp);
		free(of->temp);
		of->temp = NULL;
		return ks_error_set(err, "%s: cannot create: %s", of->path, strerror(e));
	}
	return 0;
}

static void free_outfile(struct ks_outfile *of)
{
	free(of->path);
	free(of->final);
	free(of->temp);
	free(of);
}

/* An existing character device, or a pipe the program has open already
 * (/dev/null, /dev/stdout): written in place, never renamed over,
 * truncated or removed.  Opened without waiting (a device or pipe that
 * would block the open is an error, not a hang), then written blocking. */
static int open_direct(struct ks_outfile *of, struct ks_error *err)
{
	int fd = open(of->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK), fl;

	if (fd < 0)
		return ks_error_code(err, KS_E_IO, "%s: cannot open: %s", of->path,
				    errno == ENXIO ? "nothing reads from it" : strerror(errno));
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		return ks_error_set(err, "%s: cannot open: %s", of->path, strerror(e));
	}
	if ((of->flags & KS_OUTFILE_NO_STDOUT) && lseek(fd, 0, SEEK_CUR) < 0) {
		close(fd);
		return ks_error_set(err, "%s: cannot seek there; this output is written with "
				    "seeks: name a regular file (or /dev/null)", of->path);
	}
	of->fd = fd;
	of->direct = true;
	of->f = fopencookie(of, "wb", (cookie_io_functions_t){ ck_read, ck_write, ck_seek,
							       ck_close });
	if (!of->f) {
		int e = errno;
		close(fd);
		return ks_error_set(err, "%s: cannot open: %s", of->path, strerror(e));
	}
	return 0;
}

int ks_outfile_open(struct ks_outfile **out, const char *path, const char *const *inputs,
		    unsigned flags, struct ks_error *err)
{
	struct ks_outfile *of;

	*out = NULL;
	if (ks_outfile_check(path, inputs, flags, err) < 0)
		return -1;
	of = calloc(1, sizeof(*of));
	if (!of || !(of->path = strdup(path))) {
		free(of);
		return ks_error_code(err, KS_E_NOMEM, "%s: out of memory", path);
	}
	of->flags = flags;
	if (is_stdout(path)) {
		of->f = stdout;
		*out = of;
		return 0;
	}
	{
		struct stat st;
		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
			if (open_direct(of, err) < 0) {
				free_outfile(of);
				return -1;
			}
			*out = of;
			return 0;
		}
	}
	if (!(of->final = final_name(path, err)) || create_temp(of, err) < 0) {
		free_outfile(of);
		return -1;
	}
	*out = of;
	return 0;
}

FILE *ks_outfile_stream(struct ks_outfile *of)
{
	return of->f;
}

const char *ks_outfile_path(const struct ks_outfile *of)
{
	return of->path;
}

const char *ks_outfile_temp_path(const struct ks_outfile *of)
{
	return of->temp;
}

void ks_outfile_abort(struct ks_outfile *of)
{
	if (!of)
		return;
	if (of->temp || of->direct) {
		if (of->f)
			fclose(of->f);
		if (of->temp)
			unlink(of->temp);
	}
	free_outfile(of);
}

/* fsync that ignores file systems without it (EINVAL: pipes, some special
 * file systems). */
static int sync_fd(int fd)
{
	return fsync(fd) == 0 || errno == EINVAL || errno == ENOTSUP ? 0 : -1;
}

static void sync_dir(const char *final)
{
	const char *slash = strrchr(final, '/');
	char dir[PATH_MAX];
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == final)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - final), final);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		/* the data is safe in the file already; a directory that cannot
		 * be synced (some file systems) only delays the name */
		(void)fsync(fd);
		close(fd);
	}
}

static int commit_stdout(struct ks_outfile *of, struct ks_error *err)
{
	int bad = ferror(stdout), e = 0;

	if (fflush(stdout) != 0)
		e = errno;
	free_outfile(of);
	if (bad || e)
		return ks_error_set(err, "standard output: write error%s%s", e ? ": " : "",
				    e ? strerror(e) : "");
	return 0;
}

static int commit_direct(struct ks_outfile *of, struct ks_error *err)
{
	int bad = ferror(of->f), e = 0;

	if (fflush(of->f) != 0)
		e = of->werr ? of->werr : errno;
	if (fclose(of->f) != 0 && !e)
		e = errno;
	if (bad && !e)
		e = of->werr;
	if (bad || e)
		ks_error_set(err, "%s: write error%s%s", of->path, e ? ": " : "", e ? strerror(e) : "");
	free_outfile(of);
	return bad || e ? -1 : 0;
}

int ks_outfile_commit(struct ks_outfile *of, struct ks_error *err)
{
	struct stat st;
	const char *what = "write error";
	int e = 0, bad;

	if (!of)
		return ks_error_set(err, "no output file");
	if (of->direct)
		return commit_direct(of, err);
	if (!of->temp)
		return commit_stdout(of, err);
	bad = ferror(of->f);
	if (fflush(of->f) != 0)
		e = of->werr ? of->werr : errno;
	else if (!bad && sync_fd(of->fd) < 0)
		e = errno;
	if (fclose(of->f) != 0 && !e)
		e = errno;
	of->f = NULL;
	if (bad && !e)
		e = of->werr;
	if (bad || e)
		goto fail;
	/* the final name may have become something else meanwhile: a rename
	 * over a device node would replace the node */
	if (lstat(of->final, &st) == 0 && !S_ISREG(st.st_mode)) {
		unlink(of->temp);
		ks_error_set(err, "%s: not a regular file any more; the output is not "
			     "renamed over it", of->path);
		free_outfile(of);
		return -1;
	}
	if ((of->flags & KS_OUTFILE_KEEP_OLD) && lstat(of->final, &st) == 0) {
		size_t n = strlen(of->final) + 5;
		char *old = malloc(n);

		if (!old) {
			e = ENOMEM;
			goto fail;
		}
		snprintf(old, n, "%s.old", of->final);
		if (rename(of->final, old) < 0) {
			e = errno;
			what = "cannot keep the previous file as .old";
			free(old);
			goto fail;
		}
		free(old);
	}
	if (rename(of->temp, of->final) < 0) {
		e = errno;
		what = "cannot rename the finished file to its name";
		goto fail;
	}
	sync_dir(of->final);
	free_outfile(of);
	return 0;
fail:
	unlink(of->temp);
	ks_error_set(err, "%s: %s%s%s", of->path, what, e ? ": " : "", e ? strerror(e) : "");
	free_outfile(of);
	return -1;
}

int ks_stdout_close(struct ks_error *err)
{
	int bad = ferror(stdout), e = 0;

	if (fflush(stdout) != 0)
		e = errno;
	/* a closed standard output nothing was written to is no error */
	if (fclose(stdout) != 0 && !e && (bad || errno != EBADF))
		e = errno;
	if (bad || e)
		return ks_error_set(err, "standard output: write error%s%s", e ? ": " : "",
				    e ? strerror(e) : "");
	return 0;
}
