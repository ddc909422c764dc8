/* The build with MPI: see dist.h. */
#include "config.h"
#include "dist.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "encode.h"
#include "engine.h"
#include "input.h"
#include "multidev.h"
#include "output.h"
#include "partition.h"
#include "pipeline.h"
#include "runs.h"
#include "tmpfile.h"
#include "util.h"

/* Records sampled per process: the ranges' sizes then vary by about
 * 1/sqrt(SAMPLES) of a range, which the other processes wait for. */
#define SAMPLES 16384
/* The most bytes one message carries: MPI counts are ints. */
#define CHUNK ((uint64_t)1 << 30)

static bool mpi_on;
static int nprocs = 1, me;
/* Every process knows the sort failed: each ends on its own, not by
 * MPI_Abort. */
static bool failed_together;

int dist_init(int *argc, char ***argv)
{
	int provided;

	/* Only under a launcher: a plain clsort starts no MPI runtime. */
	if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK"))
		return 0;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
		msg_err("cannot start MPI");
		return CLS_E_FAIL;
	}
	mpi_on = true;
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	if (nprocs > 1)
		snprintf(util_who, sizeof util_who, "rank %d: ", me);
	return 0;
}

int dist_finish(int status)
{
	if (!mpi_on)
		return status;
	if (status != 0 && nprocs > 1) {
		if (!failed_together)
			MPI_Abort(MPI_COMM_WORLD, status);
		/* Open MPI ends the job when a process exits with a status:
		 * none exits before every one has cleaned up. */
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return status;
}

/* A step's status on this process, rc, told to all: CLS_E_FAIL on every
 * process when it failed on any, else 0.  A bad line, a missing input or
 * a full disk fails one process at a step's end, where every process meets
 * the others here and all end together: an MPI_Abort from the one would
 * kill the others while its message may still be on its way to mpirun,
 * and process 0 before it removes the output's temporary file.  Failures
 * inside the exchanges (no memory for a message) still abort. */
static int agree(int rc)
{
	int mine = rc != 0, any = 0;

	MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (any)
		failed_together = true;
	return any ? CLS_E_FAIL : 0;
}

/* A failure inside an exchange, where the others wait for this process
 * and cannot learn of it: the message is printed; the output's temporary
 * file goes (process 0's), and all end. */
static void abort_all(void)
{
	tmp_remove_guarded();
	MPI_Abort(MPI_COMM_WORLD, CLS_EXIT_ERROR);
	exit(CLS_EXIT_ERROR);
}

/* One process's share of the work, and what it took. */
struct share {
	const struct cls_opts *o;
	struct enc_format f;
	int lrank, lsize;		/* among the processes of this host */
	struct cls_input ci;		/* every input, mapped */
	const struct in_set *in;	/* ci's */
	struct in_set slice;		/* this process's records of them */
	struct in_file *views;
	size_t *view_of;		/* the input each view is of */
	uint64_t base;			/* where the slice starts in the inputs end to end */
	char *tmp_path;			/* process 0: the output's temporary file */
	int out_fd;
	uint64_t head_len;		/* bytes before the sorted records */
	struct cls_opts ro;		/* this process's share of the options */
	struct engine *eng;		/* its device, opened by... */
	pthread_t starter;		/* ...this thread, while the records move */
	bool starting;
	int start_rc;
	double t_start;
	double t[8];
};

/* Where slice r of the inputs starts: at the first record at or after its
 * share of their bytes.  *file and *off locate it, *global is its byte in
 * the inputs end to end. */
static void slice_start(const struct enc_format *f, const struct in_set *in, int r,
			size_t *file, size_t *off, uint64_t *global)
{
	uint64_t g = in->bytes / (uint64_t)nprocs * (uint64_t)r +
		     in->bytes % (uint64_t)nprocs * (uint64_t)r / (uint64_t)nprocs;
	uint64_t base = 0;
	size_t i = 0, o;

	while (i < in->count && g >= in->files[i].size) {
		g -= in->files[i].size;
		base += in->files[i].size;
		i++;
	}
	if (i == in->count) {
		*file = in->count;
		*off = 0;
		*global = in->bytes;
		return;
	}
	o = (size_t)g;
	if (f->fmt == CLS_FMT_BIN) {
		o -= o % f->rec_size;
	} else if (o > 0 && in->files[i].data[o - 1] != (unsigned char)f->eol) {
		const struct in_file *fl = &in->files[i];
		const unsigned char *nl = memchr(fl->data + o, f->eol, fl->size - o);
		o = nl ? (size_t)(nl - fl->data) + 1 : fl->size;
	}
	*file = i;
	*off = o;
	*global = base + o;
}

/* This process's slice: views of the inputs from its start to the next
 * one's. */
static int make_slice(struct share *s)
{
	size_t fa, oa, fb, ob, i;
	uint64_t end;

	slice_start(&s->f, s->in, me, &fa, &oa, &s->base);
	slice_start(&s->f, s->in, me + 1, &fb, &ob, &end);
	s->views = calloc(s->in->count + 1, sizeof *s->views);
	s->view_of = calloc(s->in->count + 1, sizeof *s->view_of);
	if (!s->views || !s->view_of) {
		msg_errno(ENOMEM, "cannot cut the input into slices");
		return CLS_E_FAIL;
	}
	s->slice.files = s->views;
	for (i = fa; i < s->in->count && i <= fb; i++) {
		const size_t a = i == fa ? oa : 0;
		const size_t b = i == fb ? ob : s->in->files[i].size;
		struct in_file *v = &s->views[s->slice.count];
		if (b <= a)
			continue;
		*v = s->in->files[i];
		v->data += a;
		v->size = b - a;
		s->view_of[s->slice.count++] = i;
		s->slice.bytes += b - a;
	}
	return 0;
}

/* A kv line without a key in the slice: name it, file and line, as the
 * one-process sort does. */
static void name_bad_line(const struct share *s)
{
	size_t i;

	for (i = 0; i < s->slice.count; i++) {
		const struct in_file *v = &s->views[i], *file = &s->in->files[s->view_of[i]];
		const unsigned char *p = file->data;
		struct enc_cursor c;
		int rc;

		enc_cursor_init(&c, &s->f, v->data, v->size, v->name);
		/* Lines before the view, counted only now. */
		c.no = file->first_line;
		while (p < v->data && (p = memchr(p, s->f.eol, (size_t)(v->data - p))) != NULL) {
			c.no++;
			p++;
		}
		while ((rc = enc_cursor_next(&c)) > 0)
			;
		if (rc < 0)
			return;
	}
	msg_err("a line without a key in the input");
}

/* The splitters every process cuts its slice by: process 0 draws them from
 * the samples of all, and tells the others.  0, or CLS_E_FAIL on every
 * process. */
static int agree_splitters(struct share *s, struct part_key *sp, size_t *nsp)
{
	const uint64_t want64 = s->in->bytes ? (uint64_t)SAMPLES * (uint64_t)nprocs *
						s->slice.bytes / s->in->bytes + 1 : 0;
	const size_t want = (size_t)want64;
	struct part_sample *mine = calloc(want + 1, sizeof *mine), *all = NULL;
	int *counts = NULL, *displs = NULL, got = 0, total = 0, i;
	unsigned long long n = 0;
	int rc = 0;

	if (me == 0) {
		counts = calloc((size_t)nprocs, sizeof *counts);
		displs = calloc((size_t)nprocs, sizeof *displs);
	}
	if (!mine || (me == 0 && (!counts || !displs))) {
		msg_errno(ENOMEM, "cannot sample the input");
		rc = CLS_E_FAIL;
	}
	if ((rc = agree(rc)))
		goto out;
	got = (int)(part_sample(&s->f, &s->slice, s->base, want, mine) * sizeof *mine);
	MPI_Gather(&got, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (me == 0) {
		for (i = 0; i < nprocs; i++) {
			displs[i] = total;
			total += counts[i];
		}
		all = malloc((size_t)total + 1);
		if (!all) {
			msg_errno(ENOMEM, "cannot gather the samples");
			abort_all();
		}
	}
	MPI_Gatherv(mine, got, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (me == 0)
		n = part_splitters(all, (size_t)total / sizeof *all, (size_t)nprocs,
				   md_whole_keys(&s->f), sp);
	MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
	MPI_Bcast(sp, (int)(n * sizeof *sp), MPI_BYTE, 0, MPI_COMM_WORLD);
	*nsp = (size_t)n;
out:
	free(mine);
	free(all);
	free(counts);
	free(displs);
	return rc;
}

/* Send every process its range of the slice (send, at sdispl, scount bytes
 * each) and receive this process's range from every other (into recv, at
 * rdispl, rcount bytes from each), in messages of at most CHUNK bytes. */
static void exchange(const unsigned char *send, const uint64_t *scount, const uint64_t *sdispl,
		     unsigned char *recv, const uint64_t *rcount, const uint64_t *rdispl)
{
	/* CLSORT_MPI_CHUNK makes messages smaller, so that tests send
	 * ranges in many pieces. */
	const char *env = getenv("CLSORT_MPI_CHUNK");
	const uint64_t chunk = env && strtoull(env, NULL, 10) > 0 &&
					       strtoull(env, NULL, 10) < CHUNK ?
				       strtoull(env, NULL, 10) : CHUNK;
	size_t nreq = 0, k = 0;
	MPI_Request *req;
	uint64_t off;
	int i;

	for (i = 0; i < nprocs; i++)
		if (i != me)
			nreq += (size_t)((scount[i] + chunk - 1) / chunk + (rcount[i] + chunk - 1) / chunk);
	req = calloc(nreq + 1, sizeof *req);
	if (!req) {
		msg_errno(ENOMEM, "cannot exchange records");
		abort_all();
	}
	/* Messages between two processes arrive in the order sent: the
	 * chunks of a range need no tags of their own. */
	for (i = 0; i < nprocs; i++)
		for (off = 0; i != me && off < rcount[i]; off += chunk)
			MPI_Irecv(recv + rdispl[i] + off,
				  (int)(rcount[i] - off < chunk ? rcount[i] - off : chunk), MPI_BYTE, i,
				  0, MPI_COMM_WORLD, &req[k++]);
	for (i = 1; i < nprocs; i++) {
		const int to = (me + i) % nprocs;
		for (off = 0; off < scount[to]; off += chunk)
			MPI_Isend(send + sdispl[to] + off,
				  (int)(scount[to] - off < chunk ? scount[to] - off : chunk), MPI_BYTE,
				  to, 0, MPI_COMM_WORLD, &req[k++]);
	}
	if (scount[me])
		memcpy(recv + rdispl[me], send + sdispl[me], scount[me]);
	MPI_Waitall((int)k, req, MPI_STATUSES_IGNORE);
	free(req);
}

/* The device of this process: the one o->device names, or for auto, gpu,
 * all and lists the host's devices shared out by local rank. */
static char *rank_device(const struct share *s)
{
	struct dev_spec spec;
	const char *pool = s->o->device;
	char **specs = NULL, *mine;
	size_t n = 0;

	if (eng_is_host(pool))
		return strdup(pool);
	if (dev_parse_spec(pool, &spec) == 0 && (spec.kind == DEV_AUTO || spec.kind == DEV_GPU))
		pool = "all";
	if (dev_expand(pool, &specs, &n))
		return NULL;
	mine = n ? strdup(specs[(size_t)s->lrank % n]) : NULL;
	dev_free_specs(specs, n);
	if (!mine)
		msg_errno(ENOMEM, "cannot choose a device");
	return mine;
}

/* Process 0 makes the output's temporary file beside OUT and tells the
 * others its name (an empty one when it could not); all open it.  0 or
 * CLS_E_FAIL. */
static int open_output(struct share *s)
{
	const char *path = s->o->output;
	unsigned long long len = 0;
	struct stat st;

	if (me == 0) {
		char *dirbuf = strdup(path);
		s->tmp_path = dirbuf ? tmp_template(dirname(dirbuf), "/.clsort.") : NULL;
		free(dirbuf);
		if (!s->tmp_path) {
			msg_errno(ENOMEM, "%s", path);
		} else if ((s->out_fd = mkstemp(s->tmp_path)) < 0) {
			msg_errno(errno, "cannot open %s for writing", path);
			free(s->tmp_path);
			s->tmp_path = NULL;
		} else {
			tmp_guard_output(s->tmp_path);
			/* Keep an existing file's permissions; a new one gets
			 * 0666 & ~umask. */
			if (stat(path, &st) == 0) {
				fchmod(s->out_fd, st.st_mode & 07777);
			} else {
				const mode_t mask = umask(0);
				umask(mask);
				fchmod(s->out_fd, 0666 & ~mask);
			}
			len = strlen(s->tmp_path) + 1;
		}
	}
	MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
	if (len == 0)
		return CLS_E_FAIL;
	if (me != 0) {
		s->tmp_path = malloc(len);
		if (!s->tmp_path) {
			msg_errno(ENOMEM, "%s", path);
			abort_all();
		}
	}
	MPI_Bcast(s->tmp_path, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (me != 0) {
		s->out_fd = open(s->tmp_path, O_WRONLY | O_CLOEXEC);
		if (s->out_fd < 0) {
			msg_errno(errno, "cannot open %s (the output's temporary file, on a file "
				  "system every process must see)", s->tmp_path);
			return CLS_E_FAIL;
		}
	}
	return 0;
}

/* What precedes the sorted records (the npy header, --header lines):
 * every process learns its length, process 0 writes it.  0 or
 * CLS_E_FAIL. */
static int write_head(struct share *s)
{
	struct out_writer mem, file;
	int rc;

	if (out_open_mem(&mem, 0, 1))
		return CLS_E_FAIL;
	rc = cls_write_head(s->o, &s->ci, &mem);
	s->head_len = mem.len;
	if (rc == 0 && me == 0 && mem.len) {
		rc = out_open_fd(&file, s->out_fd, s->o->output);
		if (rc == 0)
			rc = out_write(&file, mem.buf, mem.len);
		if (rc == 0)
			rc = out_finish(&file);
		else
			out_abort(&file);
	}
	out_abort(&mem);
	return rc;
}

static void *start_device(void *arg)
{
	struct share *s = arg;
	struct eng_config ec;
	const double t0 = now_sec();

	runs_config(&s->ro, &s->f, s->ro.device, &ec);
	s->start_rc = eng_open(&s->eng, &ec);
	s->t_start = now_sec() - t0;
	return NULL;
}

/* The device started by start_device: 0, or CLS_E_FAIL (its message is
 * printed). */
static int started_device(struct share *s)
{
	if (!s->starting)
		return CLS_E_FAIL;
	pthread_join(s->starter, NULL);
	s->starting = false;
	return s->start_rc;
}

/* Sort range on this process's device, started with status dev_rc, and
 * write it at its offset in the output: straight there when its size is
 * known, else through a temporary file whose size then places it.  0 or
 * CLS_E_FAIL; a failure before the offsets are known is every process's. */
static int sort_range(struct share *s, const struct in_set *range, int dev_rc,
		      uint64_t *written)
{
	struct out_writer file, part, tw;
	uint64_t size = range->bytes, off = 0;
	bool opened = false;
	int tmp = -1, rc = dev_rc;

	/* Parts are placed from the file's start, whatever the head's write
	 * left the offset at. */
	if (rc == 0 && lseek(s->out_fd, 0, SEEK_SET) < 0) {
		msg_errno(errno, "cannot write %s", s->o->output);
		rc = CLS_E_FAIL;
	}
	if (rc == 0 && (rc = out_open_fd(&file, s->out_fd, s->o->output)) == 0)
		opened = true;
	if (rc == 0 && !md_exact(&s->f)) {
		tmp = tmp_create(s->o->tmpdir);
		if (tmp < 0 || out_open_fd(&tw, tmp, "a temporary file")) {
			rc = CLS_E_FAIL;
		} else {
			rc = runs_sort_on(&s->ro, &s->f, range, &tw, s->eng);
			if (rc == 0)
				rc = out_finish(&tw);
			else
				out_abort(&tw);
			size = tw.total;
		}
	}
	if ((rc = agree(rc)))
		goto out;
	MPI_Exscan(&size, &off, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (me == 0)
		off = 0;
	off += s->head_len;
	if ((rc = out_open_part(&part, &file, off)))
		goto out;
	rc = tmp < 0 ? runs_sort_on(&s->ro, &s->f, range, &part, s->eng) : md_append(&part, tmp);
	if (rc == 0)
		rc = out_finish(&part);
	else
		out_abort(&part);
	if (rc == 0 && !s->o->no_sync && fsync(s->out_fd)) {
		msg_errno(errno, "cannot sync %s", s->o->output);
		rc = CLS_E_FAIL;
	}
	*written = size;
out:
	if (opened)
		out_abort(&file);
	if (tmp >= 0)
		close(tmp);
	return rc;
}

/* Make the name of the file at path durable: sync its directory.  0, or
 * -1 with errno set. */
static int sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd, rc = -1;

	if (!copy) {
		errno = ENOMEM;
		return -1;
	}
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd >= 0) {
		rc = fsync(fd);
		close(fd);
	}
	return rc;
}

/* What stdin, stdout and options of one process cannot do across several:
 * a message, and CLS_E_FAIL. */
static int refuse(const struct cls_opts *o)
{
	struct stat st;
	size_t i;

	if (o->check != CLS_CHECK_NONE || o->merge) {
		msg_err("--check and --merge run in one process: run them without mpirun -n %d",
			nprocs);
		return CLS_E_FAIL;
	}
	if (o->format == CLS_FMT_NPY && o->unique) {
		msg_err("-f npy -u runs in one process (the header counts the records kept): run it "
			"without mpirun -n %d", nprocs);
		return CLS_E_FAIL;
	}
	if (!o->output) {
		msg_err("standard output is not shared by the %d processes: name the output "
			"with -o FILE, on a file system every process sees", nprocs);
		return CLS_E_FAIL;
	}
	if (stat(o->output, &st) == 0 && !S_ISREG(st.st_mode)) {
		msg_err("%s: not a regular file: the %d processes write a regular file",
			o->output, nprocs);
		return CLS_E_FAIL;
	}
	if (o->nfiles == 0) {
		msg_err("standard input is not shared by the %d processes: name the input FILEs, "
			"on a file system every process sees", nprocs);
		return CLS_E_FAIL;
	}
	for (i = 0; i < o->nfiles; i++)
		if (!strcmp(o->files[i], "-")) {
			msg_err("standard input (-) is not shared by the %d processes: name the "
				"input FILEs", nprocs);
			return CLS_E_FAIL;
		}
	return 0;
}

static int sort_across(const struct cls_opts *o)
{
	struct share s;
	struct part_key *sp = NULL;
	struct part_set parts;
	uint64_t *cnt = NULL, received = 0, written = 0;
	unsigned char *recv = NULL;
	char *device = NULL;
	size_t nsp = 0;
	MPI_Comm local;
	int i, rc = CLS_E_FAIL;

	memset(&s, 0, sizeof s);
	memset(&parts, 0, sizeof parts);
	s.o = o;
	s.out_fd = -1;
	util_verbose = o->verbose;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &s.lrank);
	MPI_Comm_size(local, &s.lsize);
	MPI_Comm_free(&local);
	tmp_install_signals();
	s.t[0] = now_sec();
	if (agree(refuse(o) || cls_open_input(o, &s.ci)))
		goto out;
	s.in = &s.ci.in;
	s.f = s.ci.f;
	/* The host's cores shared by its processes, unless set. */
	if (!o->threads && s.f.threads / (unsigned)s.lsize)
		s.f.threads /= (unsigned)s.lsize;
	else if (!o->threads)
		s.f.threads = 1;
	if (agree(make_slice(&s) || !(device = rank_device(&s))))
		goto out;
	/* The device starts while the records move. */
	s.ro = *o;
	s.ro.device = device;
	s.ro.memory_bytes = o->memory_bytes / (uint64_t)s.lsize;
	s.ro.threads = s.f.threads;
	if ((i = pthread_create(&s.starter, NULL, start_device, &s)))
		msg_errno(i, "cannot start device %s", device);
	else
		s.starting = true;
	if (agree(i) || agree(open_output(&s) || write_head(&s)))
		goto out;
	sp = calloc((size_t)nprocs, sizeof *sp);
	cnt = calloc(4 * (size_t)nprocs, sizeof *cnt);
	if (!sp || !cnt)
		msg_errno(ENOMEM, "cannot sort across %d processes", nprocs);
	s.t[1] = now_sec();
	if (agree(!sp || !cnt) || agree_splitters(&s, sp, &nsp))
		goto out;
	s.t[2] = now_sec();
	rc = part_scatter(&s.f, &s.slice, s.base, sp, nsp, NULL, &parts);
	if (rc == PART_BAD_LINE)
		name_bad_line(&s);
	if ((rc = agree(rc)))
		goto out;
	rc = CLS_E_FAIL;
	for (i = 0; (size_t)i < s.slice.count; i++)
		in_release(&s.views[i], 0, s.views[i].size);
	s.t[3] = now_sec();
	{
		uint64_t *const scount = cnt, *const sdispl = cnt + nprocs;
		uint64_t *const rcount = cnt + 2 * nprocs, *const rdispl = cnt + 3 * nprocs;
		uint64_t at = 0;
		for (i = 0; i < nprocs; i++) {
			scount[i] = (size_t)i < parts.count ? parts.ranges[i].bytes : 0;
			sdispl[i] = at;
			at += scount[i];
		}
		MPI_Alltoall(scount, 1, MPI_UINT64_T, rcount, 1, MPI_UINT64_T, MPI_COMM_WORLD);
		for (i = 0; i < nprocs; i++) {
			rdispl[i] = received;
			received += rcount[i];
		}
		recv = xmalloc(received ? received : 1, "the records received");
		/* Faulted in on every thread first: MPI would take the faults
		 * one page at a time as it copies. */
		if (recv)
			populate_parallel(recv, received, s.f.threads);
		if (agree(!recv))
			goto out;
		exchange(parts.buf, scount, sdispl, recv, rcount, rdispl);
	}
	part_free(&parts);
	s.t[4] = now_sec();
	{
		struct in_file file = { .name = "the input", .data = recv, .size = received };
		const struct in_set range = { &file, 1, received };
		rc = sort_range(&s, &range, started_device(&s), &written);
	}
	/* Every part is written, or some process failed. */
	if ((rc = agree(rc)))
		goto out;
	s.t[5] = now_sec();
	msg_info(1, "slice of %llu bytes read in %.3f s; splitters in %.3f s, cut in %.3f s, "
		 "%llu bytes received in %.3f s, device %s started in %.3f s, sorted and %llu "
		 "bytes written in %.3f s", (unsigned long long)s.slice.bytes, s.t[1] - s.t[0],
		 s.t[2] - s.t[1], s.t[3] - s.t[2], (unsigned long long)received, s.t[4] - s.t[3],
		 device, s.t_start, (unsigned long long)written, s.t[5] - s.t[4]);
	/* The output may take its name. */
	if (me == 0) {
		if (close(s.out_fd)) {
			msg_errno(errno, "write error on %s", o->output);
			rc = CLS_E_FAIL;
		} else if (rename(s.tmp_path, o->output)) {
			msg_errno(errno, "cannot rename the output into %s", o->output);
			rc = CLS_E_FAIL;
		} else {
			tmp_guard_output(NULL);
			free(s.tmp_path);
			s.tmp_path = NULL;
			if (!o->no_sync && sync_dir(o->output)) {
				msg_errno(errno, "cannot sync the directory of %s", o->output);
				rc = CLS_E_FAIL;
			}
		}
		s.out_fd = -1;
		if (rc == 0)
			msg_info(1, "total %.3f s on %d processes", now_sec() - s.t[0], nprocs);
	}
	rc = agree(rc);
out:
	if (s.starting)
		started_device(&s);
	eng_close(s.eng);
	if (s.out_fd >= 0)
		close(s.out_fd);
	/* After a failure, the output's temporary file goes. */
	if (me == 0 && s.tmp_path) {
		unlink(s.tmp_path);
		tmp_guard_output(NULL);
	}
	free(s.tmp_path);
	part_free(&parts);
	free(recv);
	free(cnt);
	free(sp);
	free(device);
	free(s.views);
	free(s.view_of);
	cls_close_input(&s.ci);
	return rc;
}

int dist_run(const struct cls_opts *o)
{
	return nprocs > 1 ? sort_across(o) : cls_run(o);
}
