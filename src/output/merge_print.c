/*
 * merge_print.c - a merged stream in trace-cmd report's layout (see
 * merge_print.h).
 */
#include <stdlib.h>
#include <string.h>

#include "kvmscope/dump.h"
#include "kvmscope/merge_print.h"
#include "kvmscope/record.h"

struct pr_input {
	struct ks_dump *dump;  /* made on first use */
	char prefix[256];
	bool after_lost;
};

struct ks_merge_printer {
	struct ks_merge *m;
	bool nsec;
	int n;
	struct pr_input *in;
};

struct ks_merge_printer *ks_merge_printer_new(struct ks_merge *m, bool nsec)
{
	struct ks_merge_printer *p = calloc(1, sizeof(*p));
	int i, width = 0;

	if (!p)
		return NULL;
	p->m = m;
	p->nsec = nsec;
	p->n = ks_merge_nr_inputs(m);
	p->in = calloc((size_t)p->n + 1, sizeof(*p->in));
	if (!p->in) {
		free(p);
		return NULL;
	}
	for (i = 0; i < p->n; i++) {
		int len = (int)strlen(ks_merge_name(m, i));
		if (len > width)
			width = len;
	}
	for (i = 0; i < p->n; i++)
		snprintf(p->in[i].prefix, sizeof(p->in[i].prefix), "%*s: ", width,
			 ks_merge_name(m, i));
	return p;
}

void ks_merge_printer_free(struct ks_merge_printer *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		if (p->in[i].dump)
			ks_dump_free(p->in[i].dump);
	free(p->in);
	free(p);
}

static struct ks_dump *input_dump(struct ks_merge_printer *p, int i)
{
	if (!p->in[i].dump)
		p->in[i].dump = ks_dump_new(ks_merge_source(p->m, i),
					    &(struct ks_dump_opts){ .nsec = p->nsec });
	return p->in[i].dump;
}

void ks_merge_print_headers(struct ks_merge_printer *p, FILE *out)
{
	int i;

	for (i = 0; i < p->n; i++) {
		struct ks_dump *d = input_dump(p, i);
		if (d)
			ks_dump_print_header(d, out, p->n > 1 ? p->in[i].prefix : NULL);
	}
}

void ks_merge_print(struct ks_merge_printer *p, const struct ks_merge_rec *r, FILE *out)
{
	struct pr_input *in = &p->in[r->input];
	struct ks_dump *d = input_dump(p, r->input);
	const char *text;
	size_t len;

	if (!d || !(text = ks_dump_format(d, r->rec, &len)))
		return;
	/* trace-cmd prints a dropped-events notice and the next event as one */
	if (p->n > 1 && !in->after_lost)
		fputs(in->prefix, out);
	in->after_lost = r->rec->type == KS_REC_LOST;
	fwrite(text, 1, len, out);
	fputc('\n', out);
}
