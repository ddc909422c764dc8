#include "config.h"
#include "kmerge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct source {
	struct enc_cursor c;
	const struct mrg_run *run;
	size_t order;		/* of its run among those merged */
};

static bool before(const struct source *a, const struct source *b)
{
	/* Equal keys: the earlier run first, which keeps the sort stable. */
	const int c = a->c.key != b->c.key ? (a->c.key < b->c.key ? -1 : 1) :
		      enc_cursor_cmp(&a->c, &b->c);
	return c < 0 || (c == 0 && a->order < b->order);
}

static void sift_down(struct source **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && before(h[l], h[m]))
			m = l;
		if (l + 1 < n && before(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct source *t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Fixed-size records merge without a cursor per record: each source's
 * keys are turned into sortable ones a block at a time by the key type's
 * bulk encoder, and records are copied into a local buffer. */
#define KEY_BLOCK 256
#define COPY_BLOCK ((size_t)256 << 10)

struct bin_source {
	const unsigned char *p, *end;	/* next record to load keys for, range end */
	uint64_t keys[KEY_BLOCK];
	size_t pos, count;		/* current key in keys[], keys loaded */
	const unsigned char *rec;	/* record of keys[pos] */
};

/* Load the next block of keys; false when the source is exhausted. */
static bool bin_refill(const struct enc_format *f, struct bin_source *s)
{
	size_t n = (size_t)(s->end - s->p) / f->rec_size, i;
	if (n == 0)
		return false;
	if (n > KEY_BLOCK)
		n = KEY_BLOCK;
	if (f->kt->width == 4) {
		uint32_t k32[KEY_BLOCK];
		f->kt->encode(s->p + f->key_off, f->rec_size, n, f->mask, k32, false, 0);
		for (i = 0; i < n; i++)
			s->keys[i] = k32[i];
	} else {
		f->kt->encode(s->p + f->key_off, f->rec_size, n, f->mask, s->keys, false, 0);
	}
	s->rec = s->p;
	s->p += n * f->rec_size;
	s->pos = 0;
	s->count = n;
	return true;
}

/* A tournament (loser) tree over the sources: every record costs the same
 * log2 of the source count of compare-and-selects, which compile without
 * branches, instead of a heap sift whose data-dependent branches the
 * processor keeps mispredicting.  Entries hold the key by value; past the
 * last source, sentinels with the largest key and a larger source number
 * lose to everything. */
struct bin_head {
	uint64_t key;
	size_t src;		/* index of the source, in run order */
};

static inline bool bin_before(struct bin_head a, struct bin_head b)
{
	/* Bitwise, so that no branch is made of it. */
	return (a.key < b.key) | ((a.key == b.key) & (a.src < b.src));
}

/* Fixed-size records whose sort word orders them, into w or dst (as
 * kmerge). */
static int kmerge_records(const struct enc_format *f, const struct mrg_run *ranges, size_t k,
			  struct out_writer *w, unsigned char *dst)
{
	size_t leaves = 1, i, len = 0;
	struct bin_source *src = calloc(k ? k : 1, sizeof *src);
	struct bin_head *tree, *entry, win;
	unsigned char *buf = dst ? NULL : malloc(COPY_BLOCK + f->rec_size);
	unsigned char *to = dst ? dst : buf;
	const size_t rs = f->rec_size;
	uint64_t last = 0;		/* -u: the key written last */
	bool have_last = false;
	int rc = 0;

	while (leaves < k)
		leaves *= 2;
	tree = calloc(2 * leaves, sizeof *tree);	/* losers in [1, leaves) */
	entry = tree + leaves;				/* leaves, for the build */
	if (!src || !tree || !to) {
		msg_errno(ENOMEM, "cannot merge runs");
		rc = CLS_E_FAIL;
		goto out;
	}
	for (i = 0; i < leaves; i++) {
		entry[i].key = UINT64_MAX;
		entry[i].src = k + i;
		if (i < k) {
			src[i].p = ranges[i].data;
			src[i].end = ranges[i].data + ranges[i].len;
			if (bin_refill(f, &src[i]))
				entry[i].key = src[i].keys[0], entry[i].src = i;
		}
	}
	/* Build: each inner node keeps the loser of its subtree's final, and
	 * passes the winner up (winners kept in tree[] temporarily from the
	 * leaves' row upward). */
	{
		struct bin_head *wins = calloc(2 * leaves, sizeof *wins);
		if (!wins) {
			msg_errno(ENOMEM, "cannot merge runs");
			rc = CLS_E_FAIL;
			goto out;
		}
		for (i = 0; i < leaves; i++)
			wins[leaves + i] = entry[i];
		for (i = leaves - 1; i >= 1; i--) {
			const struct bin_head l = wins[2 * i], r = wins[2 * i + 1];
			const bool lw = bin_before(l, r);
			wins[i] = lw ? l : r;
			tree[i] = lw ? r : l;
		}
		win = leaves > 1 ? wins[1] : wins[leaves];
		free(wins);
	}
	while (win.src < k) {
		struct bin_source *top = &src[win.src];
		size_t node;
		if (f->unique && have_last && win.key == last)
			goto next;
		/* Constant sizes for the common records let memcpy be a move. */
		switch (rs) {
		case 4: memcpy(to + len, top->rec, 4); break;
		case 8: memcpy(to + len, top->rec, 8); break;
		case 16: memcpy(to + len, top->rec, 16); break;
		default: memcpy(to + len, top->rec, rs); break;
		}
		len += rs;
		last = win.key;
		have_last = true;
		if (!dst && len >= COPY_BLOCK) {
			if ((rc = out_write(w, buf, len)))
				goto out;
			len = 0;
		}
next:
		top->rec += rs;
		if (++top->pos < top->count || bin_refill(f, top))
			win.key = top->keys[top->pos];
		else
			win.key = UINT64_MAX, win.src += leaves;
		/* Replay the path from the winner's leaf to the root. */
		for (node = (leaves + (win.src % leaves)) / 2; node >= 1; node /= 2) {
			const struct bin_head t = tree[node];
			/* All ones when the winner stays: selects by mask. */
			const uint64_t m = -(uint64_t)bin_before(win, t);
			tree[node].key = (t.key & m) | (win.key & ~m);
			tree[node].src = (t.src & m) | (win.src & ~m);
			win.key = (win.key & m) | (t.key & ~m);
			win.src = (win.src & m) | (t.src & ~m);
		}
	}
	if (!dst)
		rc = out_write(w, buf, len);
out:
	free(src);
	free(tree);
	free(buf);
	return rc;
}

int kmerge_heap(const struct enc_format *f, const struct mrg_run *ranges, size_t k,
		struct out_writer *w, unsigned char *dst, size_t room)
{
	struct source *src = calloc(k ? k : 1, sizeof *src);
	struct source **heap = calloc(k ? k : 1, sizeof *heap);
	const bool kv = f->fmt == CLS_FMT_KV;
	struct enc_cursor last, was;	/* -u: the record written last */
	bool have_last = false;
	size_t i, n = 0, at = 0;
	int rc = 0;

	if (!src || !heap) {
		msg_errno(ENOMEM, "cannot merge runs");
		rc = CLS_E_FAIL;
		goto out;
	}
	for (i = 0; i < k; i++) {
		src[i].run = &ranges[i];
		src[i].order = i;
		enc_cursor_init(&src[i].c, f, ranges[i].data, ranges[i].len,
				ranges[i].input ? ranges[i].input->name : "run");
		if (ranges[i].input)
			src[i].c.no = ranges[i].input->first_line;
		rc = enc_cursor_next(&src[i].c);
		if (rc < 0)
			goto out;
		if (rc)
			heap[n++] = &src[i];
	}
	rc = 0;
	for (i = n / 2; i-- > 0;)
		sift_down(heap, n, i);
	while (n && rc == 0) {
		struct source *top = heap[0];
		if (dst && at + top->c.len + kv > room) {
			/* Runs end every line: a part is as long as its pieces. */
			msg_err("cannot merge runs: a part longer than its pieces");
			rc = CLS_E_FAIL;
			break;
		} else if (dst) {
			memcpy(dst + at, top->c.rec, top->c.len);
			at += top->c.len;
			if (kv)
				dst[at++] = (unsigned char)f->eol;
		} else if (!f->unique || !have_last || enc_cursor_cmp(&last, &top->c) != 0) {
			rc = out_write(w, top->c.rec, top->c.len);
			if (rc == 0 && kv)
				rc = out_write(w, &f->eol, 1);
			if (rc)
				break;
			last = top->c;
			have_last = true;
		}
		was = top->c;
		rc = enc_cursor_next(&top->c);
		if (rc < 0)
			break;
		if (rc == 1 && top->run->input && enc_cursor_cmp(&was, &top->c) > 0) {
			if (kv)
				msg_err("%s:%llu: disorder: %.*s", top->c.name,
					(unsigned long long)top->c.no,
					(int)(top->c.len > 200 ? 200 : top->c.len), (const char *)top->c.rec);
			else
				msg_err("%s: record %llu: disorder", top->c.name,
					(unsigned long long)top->c.no);
			rc = CLS_E_FAIL;
			break;
		}
		if (rc == 0)
			heap[0] = heap[--n];
		rc = 0;
		sift_down(heap, n, 0);
	}
	if (rc == 0 && dst && at != room) {
		msg_err("cannot merge runs: a part shorter than its pieces");
		rc = CLS_E_FAIL;
	}
out:
	free(src);
	free(heap);
	return rc;
}

int kmerge(const struct enc_format *f, const struct mrg_run *ranges, size_t k,
	   struct out_writer *w, unsigned char *dst, size_t room)
{
	return f->fmt == CLS_FMT_BIN && !f->tail ? kmerge_records(f, ranges, k, w, dst)
						 : kmerge_heap(f, ranges, k, w, dst, room);
}
