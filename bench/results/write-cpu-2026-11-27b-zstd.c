/* Block compression A/B on zstd 1.5.7 (the Rust crate's bundled version).
   zb sst FILE... : blocks = the zstd frames found in table files, decompressed
   zb raw FILE... : blocks = 16 KiB pieces of the files
   params via env: MML, TL (targetLength, forces literal compression on), HL (hashLog), LCM
   prints sizes; compress/decompress split by callgrind inclusive of do_compress / do_decompress */
#define ZSTD_STATIC_LINKING_ONLY
#include "zstd.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define MAXB 4000
static char* blk[MAXB]; static size_t blen[MAXB]; static int nb;
static char* cmp[MAXB]; static size_t clen[MAXB];
static char* rd(const char* p, size_t* n) { FILE* f = fopen(p, "rb"); if (!f) return 0; fseek(f, 0, 2); *n = ftell(f); fseek(f, 0, 0); char* b = malloc(*n + 1); if (fread(b, 1, *n, f) != *n) exit(1); fclose(f); return b; }
static int env(const char* k) { const char* v = getenv(k); return v ? atoi(v) : 0; }
__attribute__((noinline)) size_t do_compress(ZSTD_CCtx* c) { size_t t = 0; for (int i = 0; i < nb; i++) { cmp[i] = malloc(ZSTD_compressBound(blen[i])); clen[i] = ZSTD_compress2(c, cmp[i], ZSTD_compressBound(blen[i]), blk[i], blen[i]); if (ZSTD_isError(clen[i])) { printf("err %s\n", ZSTD_getErrorName(clen[i])); exit(1);} t += clen[i]; } return t; }
__attribute__((noinline)) size_t do_decompress(ZSTD_DCtx* d) { size_t t = 0; static char out[1 << 20]; for (int i = 0; i < nb; i++) { size_t r = ZSTD_decompressDCtx(d, out, sizeof out, cmp[i], clen[i]); if (r != blen[i] || memcmp(out, blk[i], r)) { printf("mismatch\n"); exit(1);} t += r; } return t; }
int main(int argc, char** argv) {
  int sst = !strcmp(argv[1], "sst"); int lim = env("LIMIT") ? env("LIMIT") : MAXB;
  for (int a = 2; a < argc && nb < lim; a++) {
    size_t n; char* in = rd(argv[a], &n); if (!in) continue;
    if (!sst) { for (size_t o = 0; o < n && nb < lim; o += 16384) { blen[nb] = n - o < 16384 ? n - o : 16384; blk[nb] = in + o; nb++; } continue; }
    for (size_t o = 0; o + 4 < n && nb < lim; o++) {
      if (memcmp(in + o, "\x28\xb5\x2f\xfd", 4)) continue;
      unsigned long long cs = ZSTD_getFrameContentSize(in + o, n - o);
      if (cs == ZSTD_CONTENTSIZE_ERROR || cs == ZSTD_CONTENTSIZE_UNKNOWN || cs > (1 << 20)) continue;
      size_t fl = ZSTD_findFrameCompressedSize(in + o, n - o); if (ZSTD_isError(fl)) continue;
      char* raw = malloc(cs); size_t r = ZSTD_decompress(raw, cs, in + o, fl); if (ZSTD_isError(r)) { free(raw); continue; }
      blk[nb] = raw; blen[nb] = r; nb++; o += fl - 1;
    }
  }
  ZSTD_CCtx* c = ZSTD_createCCtx(); ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, env("LEVEL") ? env("LEVEL") : 1);
  if (env("MML")) ZSTD_CCtx_setParameter(c, ZSTD_c_minMatch, env("MML"));
  if (env("TL")) { ZSTD_CCtx_setParameter(c, ZSTD_c_targetLength, env("TL")); }
  if (env("LCM")) ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, env("LCM"));
  if (env("HL")) ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, env("HL"));
  size_t raw = 0; for (int i = 0; i < nb; i++) raw += blen[i];
  size_t z = do_compress(c); ZSTD_DCtx* d = ZSTD_createDCtx(); do_decompress(d);
  printf("blocks %d raw %zu -> %zu ratio %.4f\n", nb, raw, z, (double)raw / z);
}
