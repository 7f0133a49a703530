/*
 * vfs.h - the VFS the store opens its files with: SQLite's own unix VFS,
 * with the memory map of a database file advised for random access.
 *
 * Why: the store maps its file (PRAGMA mmap_size) so warm reads cost no
 * copy, but a page fault on a file mapping makes the kernel read around
 * it (the device's whole readahead window, often megabytes), so a cold
 * query touching a few scattered chunks read most of the file. Advised
 * MADV_RANDOM, a fault reads the page it needs; pages already in the page
 * cache are mapped as before, so warm reads are unchanged.
 *
 * It also replaces the unix VFS's "open" system call (xSetSystemCall) with one
 * that advises a database's descriptor POSIX_FADV_RANDOM for reads through
 * read(2); other files open as before.
 *
 * Threads: cs_vfs_name() is safe from any of our threads; the first call
 * registers (pthread_once), and every store open calls it first. Replacing
 * the system call writes SQLite's process-wide table unsynchronised: in a
 * process where other code opens SQLite files on other threads at that
 * moment (the collector inside an application), that write races with
 * their reads of it (a pointer, replaced once). A descriptor the unix VFS
 * reuses from an earlier connection is not advised again.
 */
#ifndef CS_VFS_H
#define CS_VFS_H

/* The name to pass to sqlite3_open_v2, registering the VFS on the first
 * call; NULL (SQLite's default VFS) when it could not be registered. */
const char *cs_vfs_name(void);

#endif
