// truth.cu - the GPU check's workload: device work whose exact traffic and
// instruction counts are known, so the collector's samples and ranges can
// be compared with the truth (tests/gpu/run.sh). Self-contained: static
// cudart, no cuBLAS, no NCCL; NVTX through the header-only nvtx3 (the
// collector's libcupti is injected through NVTX_INJECTION64_PATH).
//
//   truth info          device name, SM count, compute capability
//   truth all           every phase below, in this order
//   truth stream REPS   only the streaming copy kernel, REPS times
//
// Phases of `all` (each followed by a device sync and a 20 ms idle gap, so
// a window a little wider than a phase holds that phase's traffic alone):
//   first    truth_fma as the very first CUDA call of the process (it
//            creates the context): does sampling cover the first kernel?
//   copy     one pinned host->device and one device->host copy of
//            COPY_BYTES each (PCIe bytes)
//   stream   truth_stream STREAM_REPS times: reads STREAM_BYTES and writes
//            STREAM_BYTES exactly once each (DRAM bytes; both buffers are
//            far larger than the 50 MB L2)
//   fma      truth_fma FMA_LAUNCHES times: a fixed loop of FFMAs per thread
//            whose SASS the bundle build counts (instruction count), and a
//            known number of CTAs
//   overlap  NVTX phases comm-alone, overlap, compute-alone: truth_comm, a
//            persistent copy loop on COMM_BLOCKS blocks (a collective's
//            shape) on one stream, truth_fma on another
// Every fact is printed as a key=value line; each kernel's cudaEvent time as
//   event name=KERNEL ms=T
// in launch order (the first kernel has no events: nothing may precede it).
// Exit status: 0, or 3 when a CUDA call fails (message on stderr).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CK(x)                                                                       \
	do {                                                                        \
		cudaError_t e_ = (x);                                               \
		if (e_ != cudaSuccess) {                                            \
			fprintf(stderr, "truth: %s: %s (%s)\n", #x, cudaGetErrorString(e_), \
				cudaGetErrorName(e_));                              \
			exit(3);                                                    \
		}                                                                   \
	} while (0)

static const size_t COPY_BYTES = 256ull << 20;
static const size_t STREAM_BYTES = 1ull << 30;
static const int STREAM_REPS = 16;
static const int FMA_BLOCK = 256;      // threads per block of truth_fma
static const int FMA_UNROLL = 64;      // the inner loop: 8 chains x 64 FFMAs
static const int FIRST_BLOCKS = 1024;  // the first kernel (before the SM count is known)
static const int FIRST_ITERS = 2000;
static const int FMA_ITERS = 2400;
static const int FMA_LAUNCHES = 3;
static const int COMM_BLOCKS = 16;
static const size_t COMM_BYTES = 64ull << 20;
static const unsigned long long COMM_NS = 30000000ull; // truth_comm runs this long
static const int GAP_US = 20000;

// 8 independent FFMA chains x FMA_UNROLL per iteration; the outer loop is
// kept rolled so each iteration is the same block of SASS.
extern "C" __global__ void truth_fma(float *out, int iters, float a, float b)
{
	float x0 = threadIdx.x, x1 = x0 + 1.f, x2 = x0 + 2.f, x3 = x0 + 3.f;
	float x4 = x0 + 4.f, x5 = x0 + 5.f, x6 = x0 + 6.f, x7 = x0 + 7.f;
#pragma unroll 1
	for (int i = 0; i < iters; i++) {
#pragma unroll
		for (int j = 0; j < FMA_UNROLL; j++) {
			x0 = fmaf(x0, a, b);
			x1 = fmaf(x1, a, b);
			x2 = fmaf(x2, a, b);
			x3 = fmaf(x3, a, b);
			x4 = fmaf(x4, a, b);
			x5 = fmaf(x5, a, b);
			x6 = fmaf(x6, a, b);
			x7 = fmaf(x7, a, b);
		}
	}
	if (out)
		out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

// Reads n int4 of src and writes n int4 of dst, each exactly once.
extern "C" __global__ void truth_stream(const int4 *__restrict__ src, int4 *__restrict__ dst,
					size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
		dst[i] = src[i];
}

static __device__ unsigned long long globaltimer()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// A collective's shape: a few persistent blocks copying chunks until ns
// have passed (the time, not the traffic, is what the overlap check needs).
extern "C" __global__ void truth_comm(const int4 *__restrict__ src, int4 *__restrict__ dst,
				      size_t n, unsigned long long ns, unsigned long long *loops)
{
	__shared__ int done;
	unsigned long long start = globaltimer(), k = 0;
	size_t per = n / gridDim.x, base = blockIdx.x * per;
	for (;;) {
		for (size_t i = threadIdx.x; i < per; i += blockDim.x)
			dst[base + i] = src[base + i];
		k++;
		__syncthreads();
		if (threadIdx.x == 0)
			done = globaltimer() - start >= ns;
		__syncthreads();
		if (done)
			break;
	}
	if (threadIdx.x == 0)
		atomicAdd(loops, k);
}

static double now_ms()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double work_ms; // GPU-busy host time of every phase, gaps excluded

static void gap()
{
	CK(cudaDeviceSynchronize());
	usleep(GAP_US);
}

struct timer {
	cudaEvent_t a, b;
	const char *name;
};

static void timer_start(timer *t, const char *name, cudaStream_t s)
{
	t->name = name;
	CK(cudaEventCreate(&t->a));
	CK(cudaEventCreate(&t->b));
	CK(cudaEventRecord(t->a, s));
}

static void timer_stop(timer *t, cudaStream_t s)
{
	CK(cudaEventRecord(t->b, s));
}

static void timer_print(timer *t)
{
	float ms;
	CK(cudaEventSynchronize(t->b));
	CK(cudaEventElapsedTime(&ms, t->a, t->b));
	printf("event name=%s ms=%.4f\n", t->name, ms);
	CK(cudaEventDestroy(t->a));
	CK(cudaEventDestroy(t->b));
}

static int device_info(cudaDeviceProp *p)
{
	int dev;
	CK(cudaGetDevice(&dev));
	CK(cudaGetDeviceProperties(p, dev));
	printf("gpu=%s\nsms=%d\ncc=%d.%d\nmem_bytes=%zu\n", p->name, p->multiProcessorCount,
	       p->major, p->minor, p->totalGlobalMem);
	return p->multiProcessorCount;
}

static void phase_stream(int reps, int sms)
{
	size_t n = STREAM_BYTES / sizeof(int4);
	int4 *src, *dst;
	CK(cudaMalloc(&src, STREAM_BYTES));
	CK(cudaMalloc(&dst, STREAM_BYTES));
	CK(cudaMemset(src, 1, STREAM_BYTES));
	CK(cudaMemset(dst, 0, STREAM_BYTES));
	gap();
	printf("stream_launches=%d\nstream_bytes_read=%zu\nstream_bytes_written=%zu\n", reps,
	       (size_t)reps * STREAM_BYTES, (size_t)reps * STREAM_BYTES);
	double t0 = now_ms();
	timer *t = (timer *)calloc(reps, sizeof *t);
	for (int i = 0; i < reps; i++) {
		timer_start(&t[i], "truth_stream", 0);
		truth_stream<<<sms * 8, 512>>>(src, dst, n);
		CK(cudaGetLastError());
		timer_stop(&t[i], 0);
	}
	CK(cudaDeviceSynchronize());
	double ms = now_ms() - t0;
	work_ms += ms;
	printf("phase name=stream ms=%.3f\n", ms);
	for (int i = 0; i < reps; i++)
		timer_print(&t[i]);
	free(t);
	usleep(GAP_US);
	CK(cudaFree(src));
	CK(cudaFree(dst));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	setvbuf(stdout, NULL, _IOLBF, 0);
	cudaDeviceProp prop;
	if (!strcmp(mode, "info")) {
		device_info(&prop);
		return 0;
	}
	if (!strcmp(mode, "stream")) {
		int reps = argc > 2 ? atoi(argv[2]) : 40;
		int sms = device_info(&prop);
		double t0 = now_ms();
		phase_stream(reps > 0 ? reps : 1, sms);
		printf("wall_ms=%.3f\nwork_ms=%.3f\n", now_ms() - t0, work_ms);
		return 0;
	}
	if (strcmp(mode, "all")) {
		fprintf(stderr, "usage: truth info | all | stream [REPS]\n");
		return 2;
	}
	double start = now_ms();

	// --- first: the process's first CUDA call is this launch ---
	truth_fma<<<FIRST_BLOCKS, FMA_BLOCK>>>(NULL, FIRST_ITERS, 0.999f, 0.001f);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	double first_ms = now_ms() - start;
	printf("first_ctas=%d\nfirst_warps=%d\nfirst_iters=%d\nfirst_host_ms=%.3f\n", FIRST_BLOCKS,
	       FIRST_BLOCKS * FMA_BLOCK / 32, FIRST_ITERS, first_ms);
	int sms = device_info(&prop);
	// NVTX before the first CUDA call would be lost: the collector (and the
	// CUPTI activity it enables) starts inside cuInit.
	nvtxRangeId_t whole = nvtxRangeStartA("truth");
	usleep(GAP_US);

	// --- copy: pinned H2D and D2H of COPY_BYTES each ---
	nvtxRangePushA("copy");
	char *h, *d;
	CK(cudaMallocHost(&h, COPY_BYTES));
	memset(h, 7, COPY_BYTES);
	CK(cudaMalloc(&d, COPY_BYTES));
	gap();
	double t0 = now_ms();
	CK(cudaMemcpy(d, h, COPY_BYTES, cudaMemcpyHostToDevice));
	double ms = now_ms() - t0;
	usleep(GAP_US);
	t0 = now_ms();
	CK(cudaMemcpy(h, d, COPY_BYTES, cudaMemcpyDeviceToHost));
	ms += now_ms() - t0;
	work_ms += ms;
	printf("h2d_bytes=%zu\nd2h_bytes=%zu\nphase name=copy ms=%.3f\n", COPY_BYTES, COPY_BYTES, ms);
	nvtxRangePop();
	gap();
	CK(cudaFreeHost(h));
	CK(cudaFree(d));

	// --- stream: exact DRAM footprint ---
	nvtxRangePushA("stream");
	phase_stream(STREAM_REPS, sms);
	nvtxRangePop();

	// --- fma: known instructions and CTAs ---
	nvtxRangePushA("fma");
	float *out;
	int fma_blocks = sms * 4;
	CK(cudaMalloc(&out, (size_t)fma_blocks * FMA_BLOCK * sizeof(float)));
	gap();
	printf("fma_launches=%d\nfma_ctas=%d\nfma_warps=%d\nfma_iters=%d\n", FMA_LAUNCHES,
	       FMA_LAUNCHES * fma_blocks, FMA_LAUNCHES * fma_blocks * FMA_BLOCK / 32, FMA_ITERS);
	timer tf[FMA_LAUNCHES];
	t0 = now_ms();
	for (int i = 0; i < FMA_LAUNCHES; i++) {
		timer_start(&tf[i], "truth_fma", 0);
		truth_fma<<<fma_blocks, FMA_BLOCK>>>(out, FMA_ITERS, 0.999f, 0.001f);
		CK(cudaGetLastError());
		timer_stop(&tf[i], 0);
	}
	CK(cudaDeviceSynchronize());
	ms = now_ms() - t0;
	work_ms += ms;
	printf("phase name=fma ms=%.3f\n", ms);
	for (int i = 0; i < FMA_LAUNCHES; i++)
		timer_print(&tf[i]);
	nvtxRangePop();
	usleep(GAP_US);

	// --- overlap: a collective-like kernel and a compute kernel ---
	cudaStream_t s1, s2;
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	int4 *csrc, *cdst;
	unsigned long long *loops;
	CK(cudaMalloc(&csrc, COMM_BYTES));
	CK(cudaMalloc(&cdst, COMM_BYTES));
	CK(cudaMalloc(&loops, sizeof *loops));
	CK(cudaMemset(csrc, 3, COMM_BYTES));
	CK(cudaMemset(loops, 0, sizeof *loops));
	size_t cn = COMM_BYTES / sizeof(int4);
	int comp_blocks = sms > COMM_BLOCKS ? (sms - COMM_BLOCKS) * 4 : 4;
	printf("comm_blocks=%d\ncomm_ms=%.1f\ncompute_ctas=%d\n", COMM_BLOCKS, COMM_NS / 1e6, comp_blocks);
	gap();
	timer tc[4];
	t0 = now_ms();
	nvtxRangePushA("comm-alone");
	timer_start(&tc[0], "truth_comm", s1);
	truth_comm<<<COMM_BLOCKS, 512, 0, s1>>>(csrc, cdst, cn, COMM_NS, loops);
	CK(cudaGetLastError());
	timer_stop(&tc[0], s1);
	CK(cudaStreamSynchronize(s1));
	nvtxRangePop();
	ms = now_ms() - t0;
	usleep(GAP_US);

	t0 = now_ms();
	nvtxRangePushA("overlap");
	timer_start(&tc[1], "truth_comm", s1);
	truth_comm<<<COMM_BLOCKS, 512, 0, s1>>>(csrc, cdst, cn, COMM_NS, loops);
	CK(cudaGetLastError());
	timer_stop(&tc[1], s1);
	timer_start(&tc[2], "truth_fma", s2);
	truth_fma<<<comp_blocks, FMA_BLOCK, 0, s2>>>(out, FMA_ITERS, 0.999f, 0.001f);
	CK(cudaGetLastError());
	timer_stop(&tc[2], s2);
	CK(cudaStreamSynchronize(s1));
	CK(cudaStreamSynchronize(s2));
	nvtxRangePop();
	ms += now_ms() - t0;
	usleep(GAP_US);

	t0 = now_ms();
	nvtxRangePushA("compute-alone");
	timer_start(&tc[3], "truth_fma", s2);
	truth_fma<<<comp_blocks, FMA_BLOCK, 0, s2>>>(out, FMA_ITERS, 0.999f, 0.001f);
	CK(cudaGetLastError());
	timer_stop(&tc[3], s2);
	CK(cudaStreamSynchronize(s2));
	nvtxRangePop();
	ms += now_ms() - t0;
	work_ms += ms;
	printf("phase name=overlap ms=%.3f\n", ms);
	for (int i = 0; i < 4; i++)
		timer_print(&tc[i]);
	unsigned long long nloops;
	CK(cudaMemcpy(&nloops, loops, sizeof nloops, cudaMemcpyDeviceToHost));
	printf("comm_loops=%llu\n", nloops);
	float r;
	CK(cudaMemcpy(&r, out, sizeof r, cudaMemcpyDeviceToHost));
	printf("fma_out0=%g\n", r);
	CK(cudaFree(csrc));
	CK(cudaFree(cdst));
	CK(cudaFree(loops));
	CK(cudaFree(out));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	nvtxRangeEnd(whole);
	printf("kernel_launches=%d\n", 1 + STREAM_REPS + FMA_LAUNCHES + 4);
	printf("work_ms=%.3f\nwall_ms=%.3f\n", work_ms, now_ms() - start);
	return 0;
}
