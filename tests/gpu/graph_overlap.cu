// graph_overlap.cu - the Accel-Sim 2.0 FSDP-style check workload: a CUDA
// graph holding an NCCL AllGather, run alone, then overlapped with a
// cuBLAS GEMM on another stream, then the GEMM alone. Each phase is an
// NVTX range. Runs on one GPU (a one-rank communicator) or on all the
// GPUs it sees (one rank per GPU, single process).
//   graph_overlap [MB_PER_RANK] [REPS]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>

#define CK(x)                                                                  \
	do {                                                                   \
		cudaError_t e_ = (x);                                          \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
			return 1;                                              \
		}                                                              \
	} while (0)
#define NK(x)                                                                  \
	do {                                                                   \
		ncclResult_t r_ = (x);                                         \
		if (r_ != ncclSuccess) {                                       \
			fprintf(stderr, "%s: %s\n", #x, ncclGetErrorString(r_)); \
			return 1;                                              \
		}                                                              \
	} while (0)

struct rank {
	ncclComm_t comm;
	cudaStream_t comm_stream, gemm_stream;
	float *send, *recv, *a, *b, *c;
	cublasHandle_t blas;
	cudaGraphExec_t graph;
};

static int gemm(rank &r, int n, int reps)
{
	const float one = 1.0f, zero = 0.0f;
	for (int i = 0; i < reps; i++)
		cublasSgemm(r.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, r.a, n, r.b, n, &zero,
			    r.c, n);
	return 0;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 256;
	int reps = argc > 2 ? atoi(argv[2]) : 10;
	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	if (ndev < 1)
		return 1;
	size_t count = mb * (1 << 20) / sizeof(float);
	const int n = 4096;
	std::vector<rank> ranks(ndev);
	std::vector<ncclComm_t> comms(ndev);
	NK(ncclCommInitAll(comms.data(), ndev, nullptr));
	for (int d = 0; d < ndev; d++) {
		rank &r = ranks[d];
		r.comm = comms[d];
		CK(cudaSetDevice(d));
		CK(cudaStreamCreateWithFlags(&r.comm_stream, cudaStreamNonBlocking));
		CK(cudaStreamCreateWithFlags(&r.gemm_stream, cudaStreamNonBlocking));
		CK(cudaMalloc(&r.send, count * sizeof(float)));
		CK(cudaMalloc(&r.recv, count * ndev * sizeof(float)));
		CK(cudaMemset(r.send, 0, count * sizeof(float)));
		CK(cudaMalloc(&r.a, (size_t)n * n * sizeof(float)));
		CK(cudaMalloc(&r.b, (size_t)n * n * sizeof(float)));
		CK(cudaMalloc(&r.c, (size_t)n * n * sizeof(float)));
		cublasCreate(&r.blas);
		cublasSetStream(r.blas, r.gemm_stream);
	}
	// Capture the AllGather of every rank into one graph per rank.
	for (int d = 0; d < ndev; d++) {
		rank &r = ranks[d];
		CK(cudaSetDevice(d));
		cudaGraph_t g;
		CK(cudaStreamBeginCapture(r.comm_stream, cudaStreamCaptureModeRelaxed));
		if (ndev > 1)
			NK(ncclGroupStart());
		NK(ncclAllGather(r.send, r.recv, count, ncclFloat, r.comm, r.comm_stream));
		if (ndev > 1)
			NK(ncclGroupEnd());
		CK(cudaStreamEndCapture(r.comm_stream, &g));
		CK(cudaGraphInstantiate(&r.graph, g, 0));
	}
	auto launch_all = [&]() -> int {
		for (int d = 0; d < ndev; d++) {
			CK(cudaSetDevice(d));
			CK(cudaGraphLaunch(ranks[d].graph, ranks[d].comm_stream));
		}
		return 0;
	};
	auto sync_all = [&]() -> int {
		for (int d = 0; d < ndev; d++) {
			CK(cudaSetDevice(d));
			CK(cudaDeviceSynchronize());
		}
		return 0;
	};
	nvtxRangePushA("allgather-alone");
	for (int i = 0; i < reps; i++)
		if (launch_all())
			return 1;
	if (sync_all())
		return 1;
	nvtxRangePop();

	nvtxRangePushA("overlap");
	for (int i = 0; i < reps; i++) {
		if (launch_all())
			return 1;
		for (int d = 0; d < ndev; d++) {
			CK(cudaSetDevice(d));
			gemm(ranks[d], n, 1);
		}
	}
	if (sync_all())
		return 1;
	nvtxRangePop();

	nvtxRangePushA("gemm-alone");
	for (int d = 0; d < ndev; d++) {
		CK(cudaSetDevice(d));
		gemm(ranks[d], n, reps);
	}
	if (sync_all())
		return 1;
	nvtxRangePop();

	printf("ranks=%d\nallgather_bytes_per_rank=%zu\nreps=%d\ngemm_n=%d\n", ndev,
	       count * sizeof(float) * ndev, reps, n);
	for (int d = 0; d < ndev; d++) {
		cudaSetDevice(d);
		ncclCommDestroy(ranks[d].comm);
		cublasDestroy(ranks[d].blas);
	}
	return 0;
}
