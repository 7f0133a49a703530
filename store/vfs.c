/*
 * vfs.c - SQLite's default VFS with database mappings advised MADV_RANDOM;
 * see vfs.h.
 *
 * A shim in the usual SQLite way: each file is our header followed by the
 * wrapped VFS's own file object, and every method forwards to it. Only
 * xFetch does more: the pointer it returns lies in the wrapped VFS's map
 * of the file at offset off, so the map starts at ptr - off; the first
 * time a map (or a longer one) is seen it is advised, up to the shorter of
 * the file and the mmap limit, which is what the unix VFS maps.
 */
#define _GNU_SOURCE
#include "vfs.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <sqlite3.h>

typedef struct vfs_file {
	sqlite3_file base;
	sqlite3_file *real;
	char *map;       /* the map last advised, and its advised length */
	sqlite3_int64 map_len;
} vfs_file;

#define REAL(f) (((vfs_file *)(f))->real)
#define HEADER_SIZE ((sizeof(vfs_file) + 7) & ~(size_t)7)

static sqlite3_vfs shim, *inner;

static int f_close(sqlite3_file *f)
{
	int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
	f->pMethods = NULL;
	return rc;
}
static int f_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}
static int f_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	((vfs_file *)f)->map = NULL; /* it may be mapped anew */
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int f_sync(sqlite3_file *f, int flags)
{
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int f_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int f_lock(sqlite3_file *f, int level)
{
	return REAL(f)->pMethods->xLock(REAL(f), level);
}
static int f_unlock(sqlite3_file *f, int level)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), level);
}
static int f_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int f_control(sqlite3_file *f, int op, void *arg)
{
	if (op == SQLITE_FCNTL_MMAP_SIZE || op == SQLITE_FCNTL_SIZE_HINT)
		((vfs_file *)f)->map = NULL; /* it may be mapped anew */
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int f_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int f_device(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int f_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **pp)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), region, size, extend, pp);
}
static int f_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}
static void f_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int f_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

/* Advises the map at base, known to reach at least end. */
static void advise(vfs_file *p, char *base, sqlite3_int64 end)
{
	if (base == p->map && end <= p->map_len)
		return;
	sqlite3_int64 size = 0, limit = -1;
	if (REAL(p)->pMethods->xFileSize(REAL(p), &size) != SQLITE_OK)
		size = 0;
	/* a negative argument asks for the limit without changing it */
	if (REAL(p)->pMethods->xFileControl(REAL(p), SQLITE_FCNTL_MMAP_SIZE, &limit) != SQLITE_OK)
		limit = 0;
	sqlite3_int64 len = size < limit ? size : limit;
	len &= ~(sqlite3_int64)4095; /* never past the map's last whole page */
	if (len < end)
		len = end & ~(sqlite3_int64)4095;
	if (len > 0 && madvise(base, (size_t)len, MADV_RANDOM) == 0) {
		p->map = base;
		p->map_len = len;
	}
}

static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
	int rc = REAL(f)->pMethods->xFetch(REAL(f), off, n, pp);
	if (rc == SQLITE_OK && *pp)
		advise((vfs_file *)f, (char *)*pp - off, off + n);
	return rc;
}
static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	/* p == NULL: the unix VFS drops its map (another connection's commit,
	 * a truncation); the next one, even at the same address, is new */
	if (!p) {
		((vfs_file *)f)->map = NULL;
		((vfs_file *)f)->map_len = 0;
	}
	return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

/* The methods every wrapped file has (version 1). */
#define METHODS_V1                                                                         \
	.xClose = f_close, .xRead = f_read, .xWrite = f_write, .xTruncate = f_truncate,   \
	.xSync = f_sync, .xFileSize = f_size, .xLock = f_lock, .xUnlock = f_unlock,       \
	.xCheckReservedLock = f_reserved, .xFileControl = f_control, .xSectorSize = f_sector, \
	.xDeviceCharacteristics = f_device

static const sqlite3_io_methods methods = {
	.iVersion = 3,
	METHODS_V1,
	.xShmMap = f_shm_map,
	.xShmLock = f_shm_lock,
	.xShmBarrier = f_shm_barrier,
	.xShmUnmap = f_shm_unmap,
	.xFetch = f_fetch,
	.xUnfetch = f_unfetch,
};
/* For a wrapped file without shared memory or a map (version 1). */
static const sqlite3_io_methods methods_v1 = {.iVersion = 1, METHODS_V1};

/* The same for reads through read(2) (the header, pages past the map):
 * the unix VFS opens its descriptors through its "open" system call, which
 * it lets a program replace (xSetSystemCall). Ours advises the descriptor
 * POSIX_FADV_RANDOM when this thread is opening a database file through
 * this VFS (v_open sets the name), and is the plain call otherwise. */
typedef int (*open_fn)(const char *, int, int);
static open_fn real_open;
static __thread const char *opening; /* the database this thread opens */

static int open_advised(const char *path, int flags, int mode)
{
	int fd = real_open(path, flags, mode);
	if (fd >= 0 && opening && strcmp(path, opening) == 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	return fd;
}

static int v_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
		  int *out_flags)
{
	(void)vfs;
	vfs_file *p = (vfs_file *)f;
	memset(p, 0, sizeof *p);
	p->real = (sqlite3_file *)((char *)f + HEADER_SIZE);
	opening = flags & SQLITE_OPEN_MAIN_DB ? name : NULL;
	int rc = inner->xOpen(inner, name, p->real, flags, out_flags);
	opening = NULL;
	if (rc != SQLITE_OK || !p->real->pMethods)
		return rc; /* base.pMethods stays NULL: SQLite will not close it */
	p->base.pMethods = p->real->pMethods->iVersion >= 3 ? &methods : &methods_v1;
	return rc;
}

static void register_vfs(void)
{
	inner = sqlite3_vfs_find(NULL);
	if (!inner || inner->iVersion < 1)
		return;
	shim = *inner; /* the other methods are the wrapped VFS's own */
	shim.szOsFile = (int)HEADER_SIZE + inner->szOsFile;
	shim.zName = "cyclescope";
	shim.pNext = NULL;
	shim.xOpen = v_open;
	if (sqlite3_vfs_register(&shim, 0) != SQLITE_OK) {
		shim.zName = NULL;
		return;
	}
	if (inner->iVersion >= 3 && inner->xGetSystemCall && inner->xSetSystemCall &&
	    !strcmp(inner->zName, "unix")) {
		real_open = (open_fn)(void (*)(void))inner->xGetSystemCall(inner, "open");
		if (real_open)
			inner->xSetSystemCall(inner, "open", (sqlite3_syscall_ptr)(void (*)(void))open_advised);
	}
}

const char *cs_vfs_name(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, register_vfs);
	return shim.zName;
}
