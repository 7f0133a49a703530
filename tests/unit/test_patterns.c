/*
 * test_patterns.c - hook patterns: the suffix rule, glob lists, matching
 * callback names with and without suffixes, and API classes for windows.
 */
#include "testutil.h"

#include "collector.h"
#include "patterns.h"

static void test_base_names(void **state)
{
	char b[64];
	assert_string_equal(cs_pat_base_name("cudaMemcpy_v3020", b, sizeof b), "cudaMemcpy");
	assert_string_equal(cs_pat_base_name("cudaMemcpyAsync_ptsz_v7000", b, sizeof b), "cudaMemcpyAsync");
	assert_string_equal(cs_pat_base_name("cudaMemcpy_ptds_v7000", b, sizeof b), "cudaMemcpy");
	assert_string_equal(cs_pat_base_name("cuMemcpyHtoDAsync_v2", b, sizeof b), "cuMemcpyHtoDAsync");
	assert_string_equal(cs_pat_base_name("cuLaunchKernel_ptsz", b, sizeof b), "cuLaunchKernel");
	/* CUDA 13's <<<>>> entry points: leading underscores go too */
	assert_string_equal(cs_pat_base_name("__cudaLaunchKernel_v13000", b, sizeof b), "cudaLaunchKernel");
	assert_string_equal(cs_pat_base_name("__cudaLaunchKernel_ptsz_v13000", b, sizeof b), "cudaLaunchKernel");
	assert_string_equal(cs_pat_base_name("_", b, sizeof b), "_");
	assert_string_equal(cs_pat_base_name("cuLaunchKernel", b, sizeof b), "cuLaunchKernel");
	/* "_v" without digits, or digits without "_v", are part of the name */
	assert_string_equal(cs_pat_base_name("cuFoo_v", b, sizeof b), "cuFoo_v");
	assert_string_equal(cs_pat_base_name("cuDevice2", b, sizeof b), "cuDevice2");
	assert_string_equal(cs_pat_base_name("_v2", b, sizeof b), "_v2");
	/* truncation keeps a terminated string */
	char small[5];
	assert_string_equal(cs_pat_base_name("cudaMemcpy_v3020", small, sizeof small), "cuda");
}

static void test_lists(void **state)
{
	char err[256];
	cs_pat *p = cs_pat_parse(" cudaMemcpy* , ,cuLaunchKernel*,nccl*AllGather* ", err, sizeof err);
	assert_non_null(p);
	assert_int_equal(cs_pat_count(p), 3);
	assert_string_equal(cs_pat_item(p, 0), "cudaMemcpy*");
	assert_string_equal(cs_pat_item(p, 2), "nccl*AllGather*");
	assert_int_equal(cs_pat_match(p, "ncclDevKernel_AllGather_RING_LL"), 2);
	assert_int_equal(cs_pat_match(p, "ncclDevKernel_AllReduce_RING_LL"), -1);
	assert_int_equal(cs_pat_match(p, NULL), -1);
	assert_null(cs_pat_item(p, 3));
	cs_pat_free(p);

	p = cs_pat_parse("", err, sizeof err);
	assert_non_null(p);
	assert_int_equal(cs_pat_count(p), 0);
	assert_int_equal(cs_pat_match(p, "anything"), -1);
	cs_pat_free(p);

	assert_null(cs_pat_parse("ok,bad[abc", err, sizeof err));
	assert_non_null(strstr(err, "'bad[abc': '[' without a closing ']'"));
	char longp[400];
	memset(longp, 'a', sizeof longp - 1);
	longp[sizeof longp - 1] = '\0';
	assert_null(cs_pat_parse(longp, err, sizeof err));
	assert_non_null(strstr(err, "399 bytes long"));
	cs_pat_free(NULL);
}

static void test_callback_matching(void **state)
{
	char err[256];
	cs_pat *p = cs_pat_parse("cudaMemcpy,cuLaunchKernel*,cudaGraphLaunch_v10000", err, sizeof err);
	assert_non_null(p);
	assert_int_equal(cs_pat_match_callback(p, "cudaMemcpy_v3020"), 0);
	assert_int_equal(cs_pat_match_callback(p, "cudaMemcpy_ptds_v7000"), 0);
	assert_int_equal(cs_pat_match_callback(p, "cudaMemcpyAsync_v3020"), -1);
	assert_int_equal(cs_pat_match_callback(p, "cuLaunchKernelEx_ptsz"), 1);
	assert_int_equal(cs_pat_match_callback(p, "cuLaunchCooperativeKernel"), -1);
	/* a full name with its suffix matches too */
	assert_int_equal(cs_pat_match_callback(p, "cudaGraphLaunch_v10000"), 2);
	assert_int_equal(cs_pat_match_callback(p, "cudaGraphLaunch_ptsz_v10000"), -1);
	cs_pat_free(p);
	p = cs_pat_parse("*Malloc*", err, sizeof err);
	assert_int_equal(cs_pat_match_callback(p, "cudaMallocManaged_v6000"), 0);
	assert_int_equal(cs_pat_match_callback(p, "cuMemAlloc_v2"), -1);
	cs_pat_free(p);
}

/* The default launch pattern hooks CUDA 13's <<<>>> entry points. */
static void test_cuda13_launches(void **state)
{
	char err[128];
	cs_pat *p = cs_pat_parse(CS_COLLECTOR_DEFAULT_APIS, err, sizeof err);
	assert_non_null(p);
	assert_true(cs_pat_match_callback(p, "__cudaLaunchKernel_v13000") >= 0);
	assert_true(cs_pat_match_callback(p, "__cudaLaunchKernel_ptsz_v13000") >= 0);
	assert_true(cs_pat_match_callback(p, "__cudaRegisterFunction_v13000") < 0);
	cs_pat_free(p);
}

/* Metric lists split on commas and any whitespace: one word per slot,
 * however the separators mix (the old splitter sized its array by the
 * commas and wrote past it for "a b c"). */
static void test_words(void **state)
{
	size_t n = 99;
	char **w = cs_words(" a b,c\td\n,, e ", &n);
	assert_non_null(w);
	assert_int_equal(n, 5);
	const char *want[] = {"a", "b", "c", "d", "e"};
	for (size_t i = 0; i < n; i++)
		assert_string_equal(w[i], want[i]);
	assert_null(w[5]);
	free(w);
	w = cs_words("", &n);
	assert_non_null(w);
	assert_int_equal(n, 0);
	assert_null(w[0]);
	free(w);
	w = cs_words("lts__t_sectors.sum", &n);
	assert_int_equal(n, 1);
	assert_string_equal(w[0], "lts__t_sectors.sum");
	free(w);
}

static void test_api_classes(void **state)
{
	assert_int_equal(cs_pat_api_class("cudaDeviceSynchronize"), CS_API_SYNC_POINT);
	assert_int_equal(cs_pat_api_class("cuStreamSynchronize"), CS_API_SYNC_POINT);
	assert_int_equal(cs_pat_api_class("cudaMemcpy"), CS_API_SYNC_POINT);
	assert_int_equal(cs_pat_api_class("cuMemcpyHtoD"), CS_API_SYNC_POINT);
	assert_int_equal(cs_pat_api_class("cudaMemcpyAsync"), CS_API_ASYNC);
	assert_int_equal(cs_pat_api_class("cuMemcpyHtoDAsync"), CS_API_ASYNC);
	assert_int_equal(cs_pat_api_class("cudaLaunchKernel"), CS_API_ASYNC);
	assert_int_equal(cs_pat_api_class("cuGraphLaunch"), CS_API_ASYNC);
	assert_int_equal(cs_pat_api_class("cudaMemset"), CS_API_ASYNC);
	assert_int_equal(cs_pat_api_class("cudaMalloc"), CS_API_SYNC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_names),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_callback_matching),
		cmocka_unit_test(test_api_classes),
		cmocka_unit_test(test_cuda13_launches),
		cmocka_unit_test(test_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
