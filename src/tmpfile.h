/* Temporary files: the unlinked ones that spilled runs and streamed
 * inputs live in, and the removal of named ones (the -o temporary file, a
 * new temporary file before its unlinking) when a signal ends the
 * process. */
#ifndef CLSORT_TMPFILE_H
#define CLSORT_TMPFILE_H

#include <sys/types.h>

/* Catch SIGINT, SIGTERM, SIGHUP and SIGBUS to remove the guarded files
 * before dying of the signal.  The first three are blocked in the calling
 * thread, and so in every thread it starts afterwards, and taken by a
 * thread of their own; call it before starting any other. */
void tmp_install_signals(void);

/* While path (a buffer that stays valid) is not NULL, the handler above
 * removes that file: for the -o temporary file until it is renamed. */
void tmp_guard_output(char *path);

/* While at is not negative, the handler cuts standard output (a regular
 * file sized ahead for the sort's output) back to at bytes. */
void tmp_guard_stdout(long long at);

/* Remove the guarded files (and cut standard output back) now, as a
 * signal would: for a process about to be ended otherwise (MPI_Abort). */
void tmp_remove_guarded(void);
/* Between these two calls no signal's removal of the guarded files runs
 * (it waits for tmp_release_signals): a name is made and renamed or
 * removed in between, from one state the handler knows to the next. */
void tmp_hold_signals(void);
void tmp_release_signals(void);

/* fallocate(2) of len bytes of fd from off, which may lengthen the file,
 * between those two calls: not after a signal cut standard output back to
 * tmp_guard_stdout's offset (the signal thread dies holding them off).
 * Its result. */
int tmp_fallocate(int fd, off_t off, off_t len);

/* A new temporary file in dir, already unlinked so that nothing is left
 * behind however the process ends.  The fd, or -1 after a message naming
 * the directory. */
int tmp_create(const char *dir);

#endif
