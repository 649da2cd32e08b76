/* Recompresses the zstd blocks of a table file: each zstd frame found in FILE is
   decompressed and compressed again at level 1 (ZSTD_compress2, one context), with
   optional overrides; instructions counted with callgrind. MML -1: decompress only.
   gcc -O2 -I<zstd-sys>/zstd/lib zstd.c /usr/lib/x86_64-linux-gnu/libzstd.so.1
   valgrind --tool=callgrind ./a.out FILE MML BLOCKS [TARGET_LENGTH [HASH_LOG]] */
#define ZSTD_STATIC_LINKING_ONLY
#include "zstd.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "rb"); static char in[25000000]; size_t n = fread(in, 1, sizeof in, f);
  int mml = atoi(argv[2]); int limit = atoi(argv[3]);
  static char raw[200000], out[200000];
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
  if (mml) ZSTD_CCtx_setParameter(c, ZSTD_c_minMatch, mml);
  if (argc > 4) { ZSTD_CCtx_setParameter(c, ZSTD_c_targetLength, atoi(argv[4])); ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, ZSTD_ps_enable); }
  if (argc > 5) ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, atoi(argv[5]));
  size_t tot_raw = 0, tot = 0, blocks = 0;
  for (size_t o = 0; o + 4 < n && blocks < limit; o++) {
    if (memcmp(in + o, "\x28\xb5\x2f\xfd", 4)) continue;
    unsigned long long cs = ZSTD_getFrameContentSize(in + o, n - o);
    if (cs == ZSTD_CONTENTSIZE_ERROR || cs == ZSTD_CONTENTSIZE_UNKNOWN || cs > sizeof raw) continue;
    size_t fl = ZSTD_findFrameCompressedSize(in + o, n - o);
    if (ZSTD_isError(fl)) continue;
    size_t r = ZSTD_decompress(raw, sizeof raw, in + o, fl);
    if (ZSTD_isError(r)) continue;
    size_t z = mml < 0 ? 1 : ZSTD_compress2(c, out, sizeof out, raw, r);
    tot_raw += r; tot += z; blocks++; o += fl - 1;
  }
  printf("blocks %zu raw %zu -> %zu ratio %.3f\n", blocks, tot_raw, tot, (double)tot_raw / tot);
}
