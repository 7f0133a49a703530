/*
 * catalog.h - the catalog's internals shared with the CUPTI source
 * (cs_catalog_*, cs_cupti_error): config images built on the host API,
 * optionally against a device's counter-availability image.
 */
#ifndef CS_CATALOG_H
#define CS_CATALOG_H

#include <stddef.h>
#include <stdint.h>

/* cuptiGetResultString's text for a CUptiResult; never NULL. */
const char *cs_cupti_error(int result);

/* 0 when CUPTI's host API knows chip, else -ENOENT listing the known
 * chips in err. */
int cs_catalog_chip_ok(const char *chip, char *err, size_t errlen);

/* Builds the config image for names on chip (avail may be NULL). On 0
 * the caller owns *image (free()) and *host, the CUPTI host object that
 * evaluates samples of this config (cs_catalog_host_free()). */
int cs_catalog_config(const char *chip, const uint8_t *avail, const char *const *names,
		      size_t n, void **host, uint8_t **image, size_t *size, size_t *passes,
		      char *err, size_t errlen);
void cs_catalog_host_free(void *host);

/* Estimated hardware-buffer bytes per sample for a config image
 * (NVPW_PeriodicSampler_Config_GetGpuEstimatedSampleSize); 0 = unknown. */
uint64_t cs_catalog_sample_bytes(const uint8_t *image, size_t size);

#endif
