/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * flamegraph.h - folded stacks -> a self-contained interactive SVG flame graph.
 *
 *	struct ks_flame *f = ks_flame_new();
 *	ks_flame_add(f, "vm;start_kernel_[k];do_idle_[k]", 42);   (root first)
 *	ks_flame_write_svg(f, out, "Guest profile", &err);
 *	ks_flame_free(f);
 *
 * The SVG embeds its own script: click a frame to zoom, "Reset zoom", Search
 * (regular expression; matches are highlighted and their share printed), and
 * a tooltip per frame with its samples and percentage.  Frames narrower than
 * 0.1 pixel are left out (as FlameGraph does) so huge profiles stay light.
 * Frame names ending in "_[k]" are guest kernel frames, "_[h]" host frames,
 * others (below the depth-1 VM / vCPU frame) guest user frames: each kind
 * has its colour, shown in a legend.  Opened in a browser, the graph
 * fills the window's width.
 */
#ifndef KVMSCOPE_OUTPUT_FLAMEGRAPH_H
#define KVMSCOPE_OUTPUT_FLAMEGRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "kvmscope/error.h"

struct ks_flame;

struct ks_flame *ks_flame_new(void);
void ks_flame_free(struct ks_flame *f);
/* STACK: frames separated by ';', root first.  Returns 0 or -1 (memory). */
int ks_flame_add(struct ks_flame *f, const char *stack, uint64_t count);
int ks_flame_write_svg(struct ks_flame *f, FILE *out, const char *title, struct ks_error *err);

#endif
