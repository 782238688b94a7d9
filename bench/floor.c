/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * floor.c - the least any perf.data reader pays: one pass over the records.
 *
 *	floor FILE
 *
 * Maps FILE, walks the records of its data section from header to header
 * and reads each one's first body word (where a sample keeps its first
 * field), as a reader must to find and order them: no decoding, no copies,
 * one thread.  Prints "records=N sum=X" (X, the sum of the words read, keeps
 * the compiler from dropping the loads) and exits 0, or 1 on a file it
 * cannot walk.
 * Timed by bench/run.sh next to `cat` and `kvmscope stat`: what is left of
 * stat's time budget once the file has been read at all.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uint64_t data_off, data_size, off, end, records = 0, sum = 0;
	const uint8_t *m;
	struct stat st;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: floor FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 104) {
		fprintf(stderr, "floor: %s: cannot read a perf.data header\n", argv[1]);
		return 1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED || memcmp(m, "PERFILE2", 8)) {
		fprintf(stderr, "floor: %s: not a perf.data file\n", argv[1]);
		return 1;
	}
	memcpy(&data_off, m + 40, 8); /* perf_file_header.data.offset */
	memcpy(&data_size, m + 48, 8);
	end = data_off + data_size;
	if (data_off > (uint64_t)st.st_size || end > (uint64_t)st.st_size || end < data_off) {
		fprintf(stderr, "floor: %s: data section beyond the file\n", argv[1]);
		return 1;
	}
	for (off = data_off; off + 8 <= end; records++) {
		uint16_t size;
		uint64_t first = 0;

		memcpy(&size, m + off + 6, 2); /* perf_event_header.size */
		if (off + 16 <= end)
			memcpy(&first, m + off + 8, 8); /* the body's first word */
		sum += first;
		if (size < 8) {
			fprintf(stderr, "floor: %s: offset %llu: record of %u bytes\n", argv[1],
				(unsigned long long)off, size);
			return 1;
		}
		off += size;
	}
	printf("records=%llu sum=%llx\n", (unsigned long long)records, (unsigned long long)sum);
	return 0;
}
