/*
 * The copy of one batch into a log-sized ring, done four ways, outside Go:
 * glibc memcpy, a loop of 512-bit stores, 512-bit non-temporal stores
 * (MOVNTDQ, then SFENCE), and 512-bit stores with PREFETCHW four lines
 * ahead. The ring is as large as BenchmarkCopyRing's (three log segments:
 * 768 KiB for a 16 KiB batch, 12 MiB for 1 MiB); every destination starts
 * 64 bytes past a page boundary of the ring. CPU time per copy.
 *
 *   gcc -O2 -o probe probe.c && ./probe
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

#define LOAD4(s, i)                                                        \
	__m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 64), \
		c = _mm512_loadu_si512(s + i + 128), e = _mm512_loadu_si512(s + i + 192)

__attribute__((target("avx512f"))) static void copy_vec(char *d, const char *s, size_t n) {
	size_t i = 0;
	for (; i + 256 <= n; i += 256) {
		LOAD4(s, i);
		_mm512_storeu_si512(d + i, a), _mm512_storeu_si512(d + i + 64, b);
		_mm512_storeu_si512(d + i + 128, c), _mm512_storeu_si512(d + i + 192, e);
	}
	memcpy(d + i, s + i, n - i);
}

__attribute__((target("avx512f"))) static void copy_nt(char *d, const char *s, size_t n) {
	size_t i = 0; /* d is 64-byte aligned here */
	for (; i + 256 <= n; i += 256) {
		LOAD4(s, i);
		_mm512_stream_si512((void *)(d + i), a), _mm512_stream_si512((void *)(d + i + 64), b);
		_mm512_stream_si512((void *)(d + i + 128), c), _mm512_stream_si512((void *)(d + i + 192), e);
	}
	memcpy(d + i, s + i, n - i);
	_mm_sfence();
}

__attribute__((target("avx512f,prfchw"))) static void copy_prefetchw(char *d, const char *s, size_t n) {
	size_t i = 0;
	for (; i + 256 <= n; i += 256) {
		for (int l = 0; l < 4; l++)
			_mm_prefetch(d + i + 1024 + 64 * l, _MM_HINT_ET0);
		LOAD4(s, i);
		_mm512_storeu_si512(d + i, a), _mm512_storeu_si512(d + i + 64, b);
		_mm512_storeu_si512(d + i + 128, c), _mm512_storeu_si512(d + i + 192, e);
	}
	memcpy(d + i, s + i, n - i);
}

int main(void) {
	const size_t sizes[] = {16384, 1 << 20}, rings[] = {3 * 256 * 1024, 12 << 20};
	const char *names[] = {"memcpy", "avx512", "nontemporal", "prefetchw"};
	for (int k = 0; k < 2; k++) {
		size_t n = sizes[k], R = rings[k];
		char *s = aligned_alloc(4096, n), *r = aligned_alloc(4096, R + 4096);
		memset(s, 3, n);
		memset(r, 1, R + 4096);
		for (int m = 0; m < 4; m++)
			for (int rep = 0; rep < 3; rep++) {
				size_t pos = 0;
				int iters = k ? 3000 : 300000;
				double t = cpu_ns();
				for (int j = 0; j < iters; j++) {
					char *d = r + pos + 64;
					switch (m) {
					case 0: memcpy(d, s, n); break;
					case 1: copy_vec(d, s, n); break;
					case 2: copy_nt(d, s, n); break;
					default: copy_prefetchw(d, s, n);
					}
					if ((pos += n) + n > R)
						pos = 0;
				}
				double ns = (cpu_ns() - t) / iters;
				printf("batch=%zu copy=%s into the ring: %.1f ns (%.1f GB/s)\n", n, names[m], ns, n / ns);
			}
	}
	return 0;
}
