/*
 * Preloaded into the guest's rping client (LD_PRELOAD) by the interop case
 * "server-forced-teardown-race" to force the losing interleaving of
 * rdma-core 44 rping's own teardown race, so that the test can show it
 * recognises that race (interop/siw_test.go, teardownRace) and still
 * checks the session and its capture.
 *
 * The race: rping's CM thread handles the DISCONNECTED event that the
 * client's own rdma_disconnect causes, acknowledges it and calls
 * rdma_get_cm_event again; the main thread meanwhile destroys its cm_id
 * (rdma_destroy_id waits only for that acknowledgement) and closes the
 * event channel (rdma_destroy_event_channel). A CM thread that comes back
 * after the close gets EBADF, prints "rdma_get_cm_event: Bad file
 * descriptor" and exits with status 255.
 *
 * This file changes no data and nothing on the wire: it only orders the
 * two threads, after siw has already released the connection.
 *   rdma_destroy_id:    once rping has called rdma_disconnect, waits
 *                       until the CM thread has acknowledged the
 *                       DISCONNECTED event (so that it was delivered);
 *   rdma_ack_cm_event:  after acknowledging DISCONNECTED, waits until the
 *                       main thread has closed the event channel;
 *   close:              after closing the event channel, sleeps, so that
 *                       the CM thread's exit comes first.
 * Every wait gives up after WAIT_MS, leaving rping to run as it would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { WAIT_MS = 5000 };

/* The head of librdmacm's struct rdma_cm_event (<rdma/rdma_cma.h>). */
struct cm_event {
	void *id;
	void *listen_id;
	int event;
};
enum { RDMA_CM_EVENT_DISCONNECTED = 10 };

static volatile int cm_fd = -1;
static volatile int disconnecting;
static volatile int disconnect_acked;
static volatile int channel_closed;

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void wait_for(volatile int *flag)
{
	for (int i = 0; i < WAIT_MS && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
		sleep_ms(1);
}

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* librdmacm opens /dev/infiniband/rdma_cm for each event channel. */
int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if (!real)
		real = next("open");
	int fd = real(path, flags, mode);
	if (fd >= 0 && strstr(path, "rdma_cm"))
		cm_fd = fd;
	return fd;
}

int close(int fd)
{
	static int (*real)(int);

	if (!real)
		real = next("close");
	int ret = real(fd);
	if (fd == cm_fd && __atomic_load_n(&disconnect_acked, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&channel_closed, 1, __ATOMIC_RELEASE);
		sleep_ms(WAIT_MS);
	}
	return ret;
}

int rdma_ack_cm_event(struct cm_event *event)
{
	static int (*real)(struct cm_event *);

	if (!real)
		real = next("rdma_ack_cm_event");
	int disconnected = event->event == RDMA_CM_EVENT_DISCONNECTED;
	int ret = real(event);
	if (disconnected) {
		__atomic_store_n(&disconnect_acked, 1, __ATOMIC_RELEASE);
		wait_for(&channel_closed);
	}
	return ret;
}

int rdma_disconnect(void *id)
{
	static int (*real)(void *);

	if (!real)
		real = next("rdma_disconnect");
	__atomic_store_n(&disconnecting, 1, __ATOMIC_RELEASE);
	return real(id);
}

/* librdmacm also creates and destroys ids of its own while it starts. */
int rdma_destroy_id(void *id)
{
	static int (*real)(void *);

	if (!real)
		real = next("rdma_destroy_id");
	if (__atomic_load_n(&disconnecting, __ATOMIC_ACQUIRE))
		wait_for(&disconnect_acked);
	return real(id);
}
