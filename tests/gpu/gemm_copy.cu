// gemm_copy.cu - a GPU check workload: host->device copies of two
// matrices, cuBLAS SGEMMs, a device->host copy of the result. Prints the
// facts the checks compare against (bytes copied, matrix size, repeats)
// as "key=value" lines.
//   gemm_copy [N] [REPEATS]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CK(x)                                                                  \
	do {                                                                   \
		cudaError_t e_ = (x);                                          \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
			return 1;                                              \
		}                                                              \
	} while (0)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8192;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	size_t bytes = (size_t)n * n * sizeof(float);
	std::vector<float> h(n * (size_t)n, 1.0f);
	float *a, *b, *c;
	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMalloc(&c, bytes));
	CK(cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b, h.data(), bytes, cudaMemcpyHostToDevice));
	cublasHandle_t handle;
	if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "cublasCreate failed\n");
		return 1;
	}
	const float one = 1.0f, zero = 0.0f;
	for (int i = 0; i < reps; i++)
		cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h.data(), c, bytes, cudaMemcpyDeviceToHost));
	printf("n=%d\nreps=%d\nh2d_bytes=%zu\nd2h_bytes=%zu\ngemm_min_bytes=%zu\nc0=%g\n", n, reps,
	       2 * bytes, bytes, 3 * bytes, h[0]);
	cublasDestroy(handle);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	return h[0] == (float)n ? 0 : 2;
}
