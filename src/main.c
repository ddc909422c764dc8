/* clsort: sort binary keys, binary records and key:value lines on an
 * OpenCL device.  This file is the command line: options into a struct
 * cls_opts, then the pipeline, then the exit status. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <popt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clsort.h"
#include "device.h"
#include "dist.h"
#include "engine.h"
#include "keydef.h"
#include "keys.h"
#include "pipeline.h"
#include "util.h"

enum {
	OPT_VERSION = 1, OPT_LIST, OPT_CHECK, OPT_CHECK_QUIET, OPT_MEMORY, OPT_SIZE, OPT_HELP,
	OPT_HOST, OPT_LOCAL, OPT_DEVSORT, OPT_PARALLEL, OPT_CHECK_REPORT, OPT_HEADER, OPT_KEY,
	OPT_SORT_KEY, OPT_FORMAT, OPT_SEP, OPT_FIELD, OPT_OUTPUT, OPT_DEVICE, OPT_TMPDIR,
};

/* -k: a key type (type_arg), or sort(1)'s key definition; -K: a key. */
static char *type_arg;
static struct kd_list keydefs;
static char *key_arg, *format_arg, *sep_arg, *field_arg, *output_arg, *device_arg, *size_arg, *memory_arg,
	*tmpdir_arg, *check_arg, *local_arg, *devsort_arg, *header_arg;
/* LONG_MIN: not given. */
static long record_arg = LONG_MIN, offset_arg = LONG_MIN, host_arg = -1, parallel_arg = -1;
static int descending, numeric, general, human, version, month, fold, blanks, stable, unique, merge,
	zero, skip_bad;
static int no_sync;
static int progress, verbose;
static int sync_output;

/* The string options' values.  popt hands each over (poptGetOptArg) and
 * they are kept in owned[] to be freed, as the variables may be pointed
 * elsewhere; given twice, the first is freed and the last counts.  (Stored
 * by popt itself, the first copy would be lost.) */
static const struct {
	int val;
	char **arg;
} string_options[] = {
	{ OPT_FORMAT, &format_arg }, { OPT_SEP, &sep_arg }, { OPT_FIELD, &field_arg },
	{ OPT_HEADER, &header_arg }, { OPT_CHECK, &check_arg }, { OPT_OUTPUT, &output_arg },
	{ OPT_DEVICE, &device_arg }, { OPT_SIZE, &size_arg }, { OPT_MEMORY, &memory_arg },
	{ OPT_TMPDIR, &tmpdir_arg }, { OPT_LOCAL, &local_arg }, { OPT_DEVSORT, &devsort_arg },
};
static char *owned[sizeof string_options / sizeof string_options[0]];

/* Takes the value of option val from ctx if it is a string option. */
static void take_string(poptContext ctx, int val)
{
	size_t i;

	for (i = 0; i < sizeof string_options / sizeof string_options[0]; i++) {
		if (string_options[i].val == val) {
			free(owned[i]);
			owned[i] = *string_options[i].arg = poptGetOptArg(ctx);
			return;
		}
	}
}

static void free_strings(void)
{
	size_t i;

	for (i = 0; i < sizeof owned / sizeof owned[0]; i++) {
		free(owned[i]);
		owned[i] = NULL;
	}
	kd_free(&keydefs);
	free(type_arg);
	type_arg = NULL;
}

static const struct poptOption options[] = {
	/* -k and -K repeat: their strings are taken with poptGetOptArg, which
	 * hands them over, where popt would drop all but the last. */
	{ "key-type", 'k', POPT_ARG_STRING, NULL, OPT_KEY,
	  "key type: u32 (default), i32, f32, u64, i64, f64; str for text keys compared "
	  "byte by byte, e.g. -t, -F 2 -k str; bytes:N for binary keys of N bytes (1 to 64) in "
	  "memcmp order, e.g. -R 100 -k bytes:10; or a sort(1) key definition, e.g. -k2,2n "
	  "(-K 2,f64), -k3,3r (-K 3,str,r), -k2 or -k1,2, repeatable as -K",
	  "TYPE|KEYDEF" },
	{ "sort-key", 'K', POPT_ARG_STRING, NULL, OPT_SORT_KEY,
	  "text: sort by field FIELD (0: the whole line) as TYPE (str, the default, or a key type), "
	  "descending with r; repeatable, the first the primary key, e.g. -t, -K 3,u32 -K 2,str,r",
	  "FIELD[,TYPE][,r]" },
	{ "format", 'f', POPT_ARG_STRING, NULL, OPT_FORMAT,
	  "input format: bin (default: little-endian keys or records), kv (text lines, the key in a "
	  "field) or npy (NumPy .npy arrays)", "FORMAT" },
	{ "record-size", 'R', POPT_ARG_LONG, &record_arg, 0,
	  "bin: fixed-size records of BYTES, the key inside them", "BYTES" },
	{ "key-offset", '\0', POPT_ARG_LONG, &offset_arg, 0,
	  "bin: offset of the key in a record (default 0)", "BYTES" },
	{ "field-separator", 't', POPT_ARG_STRING, NULL, OPT_SEP,
	  "text: the byte between fields (default ':'), \\t for a tab, or 'blank' for runs of "
	  "blanks as sort(1) splits without -t", "SEP" },
	{ "field", 'F', POPT_ARG_STRING, NULL, OPT_FIELD,
	  "text: the key is field N of the line (default 1), e.g. -t, -F 3 for a CSV's third column, "
	  "or the whole line with -F 0; "
	  "npy: the key field of structured records by its name, e.g. -f npy -F score", "N|NAME" },
	{ "merge", 'm', POPT_ARG_NONE, &merge, 0,
	  "merge inputs that are already sorted, e.g. clsort -m -t, -F 2 -k str a.csv b.csv "
	  "(an input out of order is an error)", NULL },
	{ "header", '\0', POPT_ARG_STRING | POPT_ARGFLAG_OPTIONAL, NULL, OPT_HEADER,
	  "text: the first N lines (default 1) of the first input go out first, unsorted; as many "
	  "are dropped from every other input, e.g. clsort --header -t, -F 3 a.csv b.csv", "N" },
	{ "zero-terminated", 'z', POPT_ARG_NONE, &zero, 0,
	  "text: lines end in NUL, not newline, e.g. find . -print0 | clsort -z -t / -F 2 -k str",
	  NULL },
	{ "descending", 'r', POPT_ARG_NONE, &descending, 0, "sort in descending order", NULL },
	{ "reverse", '\0', POPT_ARG_NONE, &descending, 0,
	  "same as --descending", NULL },
	{ "numeric-sort", 'n', POPT_ARG_NONE, &numeric, 0,
	  "text: the keys are numbers as sort -n reads them (digits and a point), compared "
	  "exactly, 0 where a key has none: those of sort's -k with no option of their own, -F's "
	  "field, or without either the number at the start of the line, e.g. du -s * | clsort "
	  "-rn", NULL },
	{ "general-numeric-sort", 'g', POPT_ARG_NONE, &general, 0,
	  "text: the keys are floats (f64), as sort -g reads them (1e3, inf), where --numeric-sort "
	  "reads digits and a point alone, exactly", NULL },
	{ "human-numeric-sort", 'h', POPT_ARG_NONE, &human, 0,
	  "text: as --numeric-sort, but a unit right after the number (K, M, G, T...) orders "
	  "first, as sort -h has it, e.g. du -sh * | clsort -h", NULL },
	{ "month-sort", 'M', POPT_ARG_NONE, &month, 0,
	  "text: the keys are month names as sort -M reads them: JAN to DEC in any case after "
	  "blanks, anything else first: those of sort's -k with no option of their own, or the "
	  "whole line, e.g. clsort -k1,1M -k2,2n -k3,3 /var/log/syslog", NULL },
	{ "version-sort", 'V', POPT_ARG_NONE, &version, 0,
	  "text: the keys are strings in sort -V's order, numbers within them by value (1.10 "
	  "after 1.9): those of sort's -k with no option of their own, or the whole line, e.g. "
	  "git tag | clsort -V", NULL },
	{ "ignore-case", '\0', POPT_ARG_NONE, &fold, 0,
	  "text: string keys read a to z as A to Z, as sort -f (here -f names the format): those "
	  "of sort's -k with no option of their own, or the whole line", NULL },
	{ "ignore-leading-blanks", 'b', POPT_ARG_NONE, &blanks, 0,
	  "text: string keys start past their fields' leading blanks, as sort -b: those of sort's "
	  "-k with no option of their own", NULL },
	{ "stable", 's', POPT_ARG_NONE, &stable, 0,
	  "keep records with equal keys in input order", NULL },
	{ "unique", 'u', POPT_ARG_NONE, &unique, 0,
	  "keep only the first of records with equal keys, e.g. -u -t, -F 1 for one line per value "
	  "of the first column (with -c: check that no keys are equal)", NULL },
	{ NULL, 'c', POPT_ARG_NONE, NULL, OPT_CHECK_REPORT,
	  "same as --check", NULL },
	{ "check", '\0', POPT_ARG_STRING | POPT_ARGFLAG_OPTIONAL, NULL, OPT_CHECK,
	  "check whether the input is sorted (exit 1 if not); MODE: diagnose-first (default), quiet or silent",
	  "MODE" },
	{ NULL, 'C', POPT_ARG_NONE, NULL, OPT_CHECK_QUIET,
	  "like -c, but report nothing", NULL },
	{ "skip-bad", '\0', POPT_ARG_NONE, &skip_bad, 0,
	  "text: drop lines whose key does not parse or that have fewer fields than -F, and count "
	  "them, e.g. --skip-bad -t, -F 3", NULL },
	{ "output", 'o', POPT_ARG_STRING, NULL, OPT_OUTPUT,
	  "write to FILE instead of standard output (FILE may be an input)", "FILE" },
	{ "sync", '\0', POPT_ARG_NONE, &sync_output, 0,
	  "-o: make the output durable (fsync) before giving it its name", NULL },
	{ "no-sync", '\0', POPT_ARG_NONE, &no_sync, 0,
	  "-o: do not fsync the output (the default)", NULL },
	{ "device", 'd', POPT_ARG_STRING, NULL, OPT_DEVICE,
	  "sort on: host (the host engine), auto (the quicker of the host and the auto OpenCL "
	  "device, as measured), gpu, cpu, P:D or part of a device name; all (every GPU, else every "
	  "CPU device) or a comma-separated list sorts on several at once "
	  "(default $CLSORT_DEVICE or auto)",
	  "SPEC" },
	{ "list-devices", 'L', POPT_ARG_NONE, NULL, OPT_LIST,
	  "list the host engine and the OpenCL devices and exit", NULL },
	{ "buffer-size", 'S', POPT_ARG_STRING, NULL, OPT_SIZE,
	  "device memory for one run: bytes with K, M, G, T, or N% of the device's memory", "SIZE" },
	{ "memory", '\0', POPT_ARG_STRING, NULL, OPT_MEMORY,
	  "host memory to use before spilling runs to temporary files (default: half of available)",
	  "SIZE" },
	{ "temporary-directory", 'T', POPT_ARG_STRING, NULL, OPT_TMPDIR,
	  "directory for temporary files (default $TMPDIR, else /tmp)", "DIR" },
	{ "host-threshold", '\0', POPT_ARG_LONG, &host_arg, OPT_HOST,
	  "auto: sort up to N records on the host, more on the device (default: by measured rates)",
	  "N" },
	{ "local-kernel", '\0', POPT_ARG_STRING, NULL, OPT_LOCAL,
	  "tile sort kernel: bitonic (default) or merge", "KERNEL" },
	{ "device-sort", '\0', POPT_ARG_STRING, NULL, OPT_DEVSORT,
	  "how the device sorts a run: radix, bitonic (tiles and global passes) or auto (default: "
	  "radix for large runs on a GPU)", "SORT" },
	{ "parallel", '\0', POPT_ARG_LONG, &parallel_arg, OPT_PARALLEL,
	  "host threads for parsing, encoding, merging and host sorts (default: online CPUs)", "N" },
	{ "verbose", 'v', POPT_ARG_NONE, NULL, 'v',
	  "report the device and the time of each phase on stderr (twice: more)", NULL },
	{ "progress", '\0', POPT_ARG_NONE, &progress, 0,
	  "report the phase, bytes done, rate and time left on stderr (in place on a terminal)",
	  NULL },
	{ "version", '\0', POPT_ARG_NONE, NULL, OPT_VERSION, "print the version and exit", NULL },
	{ "help", '\0', POPT_ARG_NONE, NULL, OPT_HELP, "show this help and exit", NULL },
	/* No POPT_AUTOHELP: its -?, --help and --usage would stand beside
	 * --help as a second help.  -h is sort's. */
	POPT_TABLEEND
};

/* A number as text, for messages. */
static const char *long_text(long v)
{
	static char buf[32];
	snprintf(buf, sizeof buf, "%ld", v);
	return buf;
}

/* Whether arg came as "OPTION=arg" (rather than as the next word). */
static bool given_inline(int argc, const char **argv, const char *option, const char *arg)
{
	const size_t n = strlen(option);
	int i;
	for (i = 1; i < argc; i++)
		if (!strncmp(argv[i], option, n) && argv[i][n] == '=' && !strcmp(argv[i] + n + 1, arg))
			return true;
	return false;
}

static int usage_error(const char *fmt, const char *arg)
{
	char buf[512];
	snprintf(buf, sizeof buf, fmt, arg);
	msg_err("%s", buf);
	fprintf(stderr, "Try 'clsort --help' for more information.\n");
	return CLS_EXIT_ERROR;
}

static int size_option(const char *name, const char *arg, uint64_t *bytes, double *pct,
		       bool pct_ok)
{
	double p;
	if (parse_size(arg, bytes, &p) || (p > 0 && !pct_ok)) {
		char buf[128];
		snprintf(buf, sizeof buf, "invalid %s '%%s'", name);
		return usage_error(buf, arg);
	}
	if (pct)
		*pct = p;
	return 0;
}

/* At exit, close stdout and turn a late write error (ENOSPC, EIO) into
 * status 2. */
static void close_stdout(void)
{
	if (fclose(stdout) != 0 && errno != EBADF) {
		msg_errno(errno, "write error");
		_exit(CLS_EXIT_ERROR);
	}
}

/* The key options, sort's (-k KEYDEF, -n, -g, -h, -V) and clsort's (-k
 * TYPE, -K, -F), into key_arg, field_arg, sep_arg and o: 0, or a usage
 * error's status. */
static int resolve_keys(struct cls_opts *o)
{
	static char field_text[24];
	char err[256];
	bool typed;

	key_arg = type_arg;
	if ((numeric || human) && general)
		return usage_error("%s", "-g reads numbers as floats, -n and -h as sort -n: one of "
				   "them");
	if (numeric && human)
		return usage_error("%s", "-h and -n (or -g) each say how numbers are read: one of "
				   "them");
	if (version && (numeric || general || human))
		return usage_error("%s", "-V and -n (or -g, -h) each say how keys are compared: one "
				   "of them");
	if (month && (numeric || general || human || version))
		return usage_error("%s", "-M and -n (or -g, -h, -V) each say how keys are compared: "
				   "one of them");
	if (month && (field_arg || type_arg || keydefs.own_syntax))
		return usage_error("%s", "-M applies to sort's -k or the whole line, not -F, -K or "
				   "-k TYPE: -k N,NM");
	if (version && (field_arg || type_arg || keydefs.own_syntax))
		return usage_error("%s", "-V applies to sort's -k or the whole line, not -F, -K or "
				   "-k TYPE: -k N,NV");
	if (human && field_arg)
		return usage_error("%s", "-h applies to sort's -k or the line's start, not -F: -k N,Nh");
	if ((fold || blanks) && (field_arg || type_arg || keydefs.own_syntax))
		return usage_error("%s", "--ignore-case and -b apply to sort's -k or the whole line, "
				   "not -F, -K or -k TYPE: -k N,Nf, -k N,Nb");
	if (fold && version)
		return usage_error("%s", "--ignore-case is not taken beside -V");
	numeric = numeric || general || human;
	if (numeric && (type_arg || keydefs.own_syntax))
		return usage_error("%s", type_arg ? "-n (or -g, -h) and -k TYPE both name the key's "
						    "type"
						  : "-n (or -g, -h) applies to sort's -k: -K names its "
						    "keys' types, e.g. -K 2,f64");
	/* sort's -g with -F: its field's float; -n, the field's number as
	 * sort reads it, a key of its own. */
	if (general && field_arg) {
		key_arg = "f64";
		o->num_lead = true;
	} else if (numeric && field_arg && !keydefs.n && *field_arg &&
		   !field_arg[strspn(field_arg, "0123456789")]) {
		if (kd_add_number(&keydefs, field_arg, err, sizeof err))
			return usage_error("%s", err);
		field_arg = NULL;
	}
	/* Without -k or -F, sort's -k 1: the whole line, which kd_finish
	 * makes the number at its start. */
	if ((numeric || version || month || fold || blanks) && !field_arg && !keydefs.n &&
	    kd_add_sort_key(&keydefs, "1", err, sizeof err))
		return usage_error("%s", err);
	if (!keydefs.n)
		return 0;
	/* -k N,N -k TYPE: the one key, read as TYPE. */
	typed = keydefs.n == 1 && keydefs.sort_syntax && key_arg;
	/* -k N,Nn -k TYPE: the type reads the field's number. */
	if (typed && keydefs.keys[0].exact && !keydefs.keys[0].human) {
		keydefs.keys[0].exact = false;
		keydefs.keys[0].lead = true;
	}
	if (typed && kd_composed(&keydefs))
		return usage_error("%s", "-k N,N with h, V, f or b says how the key is read: no -k "
				   "TYPE beside it");
	if (field_arg || (key_arg && !typed))
		return usage_error("%s", field_arg ? "-K (or sort's -k N,N) and -F both name the key "
						     "field"
						   : "-K (or sort's -k N,N) and -k TYPE both name the key's "
						     "type: -K FIELD,TYPE");
	/* Without -t, sort splits fields at blanks. */
	if (keydefs.sort_syntax && !sep_arg)
		sep_arg = "blank";
	kd_finish(&keydefs, &(struct kd_options){ descending, numeric, general, human, version,
						  month, fold, blanks });
	/* One key: -F N -k TYPE; sort's -h, -V, -f and a string's b are
	 * composed as several keys are. */
	if (keydefs.n == 1 && !kd_composed(&keydefs)) {
		snprintf(field_text, sizeof field_text, "%u", keydefs.keys[0].field);
		field_arg = field_text;
		if (!typed)
			key_arg = keydefs.keys[0].type ? (char *)keydefs.keys[0].type->name : "str";
		o->num_lead = keydefs.keys[0].lead;
		descending = keydefs.keys[0].reverse;
		return 0;
	}
	o->keys = keydefs.keys;
	o->nkeys = keydefs.n;
	o->str_key = true;
	descending = 0;
	if (format_arg && strcmp(format_arg, "kv"))
		return usage_error("%s", kd_composed(&keydefs) ?
				   "sort's key options apply to the kv format only" :
				   "several keys (-K) apply to the kv format only");
	return 0;
}

static int run(int argc, const char **argv, bool sigpipe_default)
{
	struct cls_opts o;
	poptContext ctx;
	const char **args;
	const char *env;
	int rc, status;
	size_t i;

	memset(&o, 0, sizeof o);
	o.key = key_type_find("u32");
	o.format = CLS_FMT_BIN;
	o.separator = ':';
	o.field = 1;

	ctx = poptGetContext("clsort", argc, argv, options, 0);
	poptSetOtherOptionHelp(ctx, "[OPTION]... [FILE]...");
	while ((rc = poptGetNextOpt(ctx)) > 0) {
		/* A string option's value first; some are looked at below. */
		take_string(ctx, rc);
		switch (rc) {
		case OPT_KEY:
		case OPT_SORT_KEY: {
			char err[256], *arg = poptGetOptArg(ctx);
			int bad;
			if (!arg) {
				msg_errno(ENOMEM, "cannot parse the command line");
				status = CLS_EXIT_ERROR;
				goto fail;
			}
			/* No key type starts with a digit: a -k that does is sort's. */
			if (rc == OPT_SORT_KEY || (arg[0] >= '0' && arg[0] <= '9')) {
				bad = rc == OPT_SORT_KEY ? kd_add_key(&keydefs, arg, err, sizeof err) :
							   kd_add_sort_key(&keydefs, arg, err, sizeof err);
				free(arg);
				if (bad) {
					status = usage_error("%s", err);
					goto fail;
				}
			} else {
				free(type_arg);
				type_arg = arg;
			}
			break;
		}
		case 'v':
			verbose++;
			break;
		case OPT_VERSION:
			printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			poptFreeContext(ctx);
			return CLS_EXIT_OK;
		case OPT_HELP:
			printf("clsort sorts binary keys, binary records and text lines on an OpenCL "
			       "device (a GPU, or the CPU).\n");
			poptPrintHelp(ctx, stdout, 0);
			printf("\nThe manual: man clsort (in the source tree: man -l man/clsort.1).\n");
			poptFreeContext(ctx);
			return CLS_EXIT_OK;
		case OPT_LIST:
			status = eng_list(stdout, o.threads ? o.threads : cpu_count()) ? CLS_EXIT_ERROR :
										   CLS_EXIT_OK;
			poptFreeContext(ctx);
			return status;
		case OPT_CHECK:
			if (check_arg && !given_inline(argc, argv, "--check", check_arg)) {
				/* "--check FILE": popt took the operand for the mode,
				 * which only --check=MODE gives. */
				const char *back[] = { check_arg, NULL };
				o.check = CLS_CHECK_REPORT;
				poptStuffArgs(ctx, back);
			} else if (!check_arg || !strcmp(check_arg, "diagnose-first")) {
				o.check = CLS_CHECK_REPORT;
			} else if (!strcmp(check_arg, "quiet") || !strcmp(check_arg, "silent")) {
				o.check = CLS_CHECK_QUIET;
			} else {
				status = usage_error("invalid --check argument '%s'", check_arg);
				poptFreeContext(ctx);
				return status;
			}
			break;
		case OPT_HEADER:
			o.header = 1;
			if (header_arg && strspn(header_arg, "0123456789") == strlen(header_arg) &&
			    *header_arg && strlen(header_arg) < 10) {
				o.header = strtoull(header_arg, NULL, 10);
			} else if (header_arg && !given_inline(argc, argv, "--header", header_arg)) {
				/* "--header FILE": popt took the operand for N. */
				const char *back[] = { header_arg, NULL };
				poptStuffArgs(ctx, back);
			} else if (header_arg) {
				status = usage_error("invalid header line count '%s'", header_arg);
				poptFreeContext(ctx);
				return status;
			}
			break;
		case OPT_CHECK_QUIET:
			o.check = CLS_CHECK_QUIET;
			break;
		case OPT_CHECK_REPORT:
			o.check = CLS_CHECK_REPORT;
			break;
		case OPT_SIZE:
			if ((status = size_option("buffer size", size_arg, &o.buffer_bytes, &o.buffer_percent, true)))
				goto fail;
			break;
		case OPT_MEMORY:
			if ((status = size_option("memory size", memory_arg, &o.memory_bytes, NULL, false)))
				goto fail;
			break;
		case OPT_HOST:
			if (host_arg < 0) {
				status = usage_error("invalid host threshold '%s'", long_text(host_arg));
				goto fail;
			}
			o.host_max = (uint64_t)host_arg;
			o.host_max_set = true;
			break;
		case OPT_PARALLEL:
			if (parallel_arg < 1 || parallel_arg > 256) {
				status = usage_error("invalid thread count '%s' (1 to 256)",
						     long_text(parallel_arg));
				goto fail;
			}
			o.threads = (unsigned)parallel_arg;
			break;
		case OPT_LOCAL:
			if (!strcmp(local_arg, "bitonic"))
				o.local = CLS_LOCAL_BITONIC;
			else if (!strcmp(local_arg, "merge"))
				o.local = CLS_LOCAL_MERGE;
			else {
				status = usage_error("invalid local kernel '%s': use bitonic or merge", local_arg);
				goto fail;
			}
			break;
		case OPT_DEVSORT:
			if (!strcmp(devsort_arg, "auto"))
				o.devsort = CLS_DEVSORT_AUTO;
			else if (!strcmp(devsort_arg, "radix"))
				o.devsort = CLS_DEVSORT_RADIX;
			else if (!strcmp(devsort_arg, "bitonic"))
				o.devsort = CLS_DEVSORT_BITONIC;
			else {
				status = usage_error("invalid device sort '%s': use auto, radix or bitonic",
						     devsort_arg);
				goto fail;
			}
			break;
		}
	}
	if (rc < -1) {
		char buf[512];
		snprintf(buf, sizeof buf, "%s: %s",
			 poptBadOption(ctx, POPT_BADOPTION_NOALIAS), poptStrerror(rc));
		status = usage_error("%s", buf);
		goto fail;
	}

	status = resolve_keys(&o);
	if (status)
		goto fail;
	if (key_arg && !strcmp(key_arg, "str")) {
		o.str_key = true;
	} else if (key_arg && !(o.key = key_type_find(key_arg))) {
		status = usage_error("invalid key type '%s': use u32, i32, f32, u64, i64, f64, str or "
				     "bytes:N (N from 1 to 64)", key_arg);
		goto fail;
	}
	if (format_arg) {
		if (!strcmp(format_arg, "bin"))
			o.format = CLS_FMT_BIN;
		else if (!strcmp(format_arg, "kv"))
			o.format = CLS_FMT_KV;
		else if (!strcmp(format_arg, "npy"))
			o.format = CLS_FMT_NPY;
		else {
			status = usage_error("invalid format '%s': use bin, kv or npy", format_arg);
			goto fail;
		}
	}
	/* The text options need no -f kv. */
	if (!format_arg && (sep_arg || field_arg || zero || o.str_key || o.header))
		o.format = CLS_FMT_KV;
	o.bare_default = !format_arg && o.format == CLS_FMT_BIN && record_arg == LONG_MIN &&
			 offset_arg == LONG_MIN;
	if (field_arg && o.format == CLS_FMT_NPY) {
		o.field_name = field_arg;
	} else if (field_arg) {
		char *end;
		unsigned long n;
		errno = 0;
		n = strtoul(field_arg, &end, 10);
		if (!*field_arg || *end || *field_arg == '-' || errno || n > 65535) {
			status = usage_error("invalid field number '%s' (0 to 65535)", field_arg);
			goto fail;
		}
		o.field = (unsigned)n;
	}
	if (sep_arg) {
		if (!strcmp(sep_arg, "blank"))
			o.blank_sep = true;
		else if (!strcmp(sep_arg, "\\t"))
			o.separator = '\t';
		else if (strlen(sep_arg) == 1 && sep_arg[0] != '\n')
			o.separator = sep_arg[0];
		else {
			status = usage_error("the separator must be one byte, not '%s' (a character of "
					     "several bytes, or several characters)", sep_arg);
			goto fail;
		}
	}
	/* sort's -k N and -k N,M: a string takes the fields to the line's
	 * end or to field M, a number is its field's. */
	if (keydefs.n) {
		char err[256];
		if (kd_check_ends(&keydefs,
				  keydefs.n == 1 && (!o.str_key || keydefs.keys[0].type), o.blank_sep,
				  o.separator, err, sizeof err)) {
			status = usage_error("%s", err);
			goto fail;
		}
		o.field_span = keydefs.n == 1 ? keydefs.keys[0].span : 0;
	}
	if (record_arg != LONG_MIN && record_arg < 1) {
		status = usage_error("invalid record size '%s'", long_text(record_arg));
		goto fail;
	}
	if (offset_arg != LONG_MIN && offset_arg < 0) {
		status = usage_error("invalid key offset '%s'", long_text(offset_arg));
		goto fail;
	}
	if (o.format != CLS_FMT_BIN && (record_arg != LONG_MIN || offset_arg != LONG_MIN)) {
		status = usage_error("%s", "--record-size and --key-offset apply to the bin format only");
		goto fail;
	}
	if ((numeric || version || month || fold || blanks) && o.format != CLS_FMT_KV) {
		status = usage_error("%s", "sort's key options apply to the kv format only");
		goto fail;
	}
	if (o.format == CLS_FMT_BIN && (sep_arg || field_arg || zero || o.str_key || o.header ||
					skip_bad)) {
		status = usage_error("%s", "--field-separator, --field, --zero-terminated, --header, "
				     "-k str and --skip-bad apply to the kv format only");
		goto fail;
	}
	if (o.format == CLS_FMT_NPY && (sep_arg || zero || o.str_key || o.header || skip_bad)) {
		status = usage_error("%s", "--field-separator, --zero-terminated, --header, -k str and "
				     "--skip-bad apply to the kv format only");
		goto fail;
	}
	if (offset_arg > 0 && record_arg == LONG_MIN) {
		status = usage_error("%s", "--key-offset needs --record-size");
		goto fail;
	}
	if ((no_sync || sync_output) && !output_arg) {
		status = usage_error("%s", no_sync ? "--no-sync applies to --output only"
						  : "--sync applies to --output only");
		goto fail;
	}
	if (no_sync && sync_output) {
		status = usage_error("%s", "--sync and --no-sync cannot be used together");
		goto fail;
	}
	if (o.check != CLS_CHECK_NONE && merge) {
		status = usage_error("%s", "--check and --merge cannot be used together");
		goto fail;
	}
	if (o.check != CLS_CHECK_NONE && output_arg) {
		status = usage_error("%s", "--check and --output cannot be used together");
		goto fail;
	}
	o.record_size = record_arg > 0 ? (size_t)record_arg : 0;
	o.key_offset = offset_arg > 0 ? (size_t)offset_arg : 0;
	o.descending = descending;
	o.stable = stable;
	o.unique = unique;
	o.merge = merge;
	o.zero_terminated = zero;
	o.skip_bad = skip_bad;
	o.verbose = verbose;
	o.output = output_arg;
	o.no_sync = !sync_output;
	o.key_explicit = key_arg != NULL;
	o.progress = progress;
	o.tmpdir = tmpdir_arg;

	env = getenv("CLSORT_HOST_THRESHOLD");
	if (env && *env && !o.host_max_set) {
		char *end;
		unsigned long long n;
		errno = 0;
		n = strtoull(env, &end, 10);
		if (*env != '-' && !*end && errno == 0) {
			o.host_max = n;
			o.host_max_set = true;
		} else {
			msg_err("warning: ignoring CLSORT_HOST_THRESHOLD='%s': not a record count", env);
		}
	}

	o.device = "auto";
	env = getenv("CLSORT_DEVICE");
	if (env && *env) {
		struct dev_spec spec;
		if (dev_parse_spec(env, &spec) == 0) {
			o.device = env;
		} else {
			msg_err("warning: ignoring CLSORT_DEVICE='%s': not a device spec", env);
		}
	}
	if (device_arg) {
		struct dev_spec spec;
		if (dev_parse_spec(device_arg, &spec)) {
			status = usage_error("invalid device '%s': use auto, gpu, cpu, P:D, part of a name, "
					     "all, or a comma-separated list",
					     device_arg);
			goto fail;
		}
		o.device = device_arg;
	}

	args = poptGetArgs(ctx);
	for (i = 0; args && args[i]; i++)
		;
	o.nfiles = i;
	/* The strings belong to the context: copy the array before freeing it. */
	o.files = calloc(i + 1, sizeof *o.files);
	if (!o.files) {
		msg_errno(ENOMEM, "cannot parse the command line");
		status = CLS_EXIT_ERROR;
		goto fail;
	}
	for (i = 0; i < o.nfiles; i++)
		((const char **)o.files)[i] = strdup(args[i]);
	poptFreeContext(ctx);
	ctx = NULL;

	cls_defaults(&o);
	rc = dist_run(&o);
	free_strings();
	for (i = 0; i < o.nfiles; i++)
		free((char *)o.files[i]);
	free((void *)o.files);
	switch (rc) {
	case CLS_OK:
		return CLS_EXIT_OK;
	case CLS_E_DISORDER:
		return CLS_EXIT_DISORDER;
	case CLS_E_PIPE:
		if (sigpipe_default) {
			signal(SIGPIPE, SIG_DFL);
			raise(SIGPIPE);
		}
		msg_errno(EPIPE, "write error");
		return CLS_EXIT_ERROR;
	default:
		return CLS_EXIT_ERROR;
	}
fail:
	free_strings();
	if (ctx)
		poptFreeContext(ctx);
	return status;
}

int main(int argc, char **argv)
{
	struct sigaction old;
	bool sigpipe_default;

	/* A closed output pipe shows up as EPIPE, so that buffers are not
	 * trusted to be written; if SIGPIPE was ours to take, we die of it
	 * then, quietly, as a filter does. */
	sigpipe_default = sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL;
	signal(SIGPIPE, SIG_IGN);
	atexit(close_stdout);
	if (dist_init(&argc, &argv))
		return CLS_EXIT_ERROR;
	return dist_finish(run(argc, (const char **)argv, sigpipe_default));
}
