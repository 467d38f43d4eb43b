/* Corrfunc's theory DD, periodic auto-correlation, timed through its public C API (countpairs in
 * theory/DD/countpairs.h), for scripts/bench-corrfunc. Our code; it links Corrfunc's static
 * libcountpairs.a built from peer-src/Corrfunc, which is never committed.
 *
 *   corrfunc_dd_driver float|double POINTS BINFILE BOXSIZE THREADS REPEATS COUNTS.csv
 *
 * POINTS: .npy (2-D float64, N x 3, C or Fortran order) or raw float64 x,y,z rows (N*24 bytes).
 * `float` hands Corrfunc float32 copies of the coordinates (its default build, as its users run
 * it: the Python wrapper picks the kernels from the arrays' dtype), `double` the float64 ones.
 * One library holds both kernels; options.float_type chooses between them, which is all that
 * -DDOUBLE_PREC in theory.options changes (it sets that field in get_config_options).
 * Options as Corrfunc's defaults (theory.options, the Python wrapper): periodic, min-separation
 * optimisation, particles copied, the fastest instruction set the CPU has.
 *
 * stdout, one CSV line: variant,n,rmax,threads,seconds,npairs
 *   seconds: the fastest of up to REPEATS calls of countpairs, none started once 3 s have been
 *   spent (gridding included, file reading and the float32 conversion excluded); npairs: distinct
 *   pairs in all bins (Corrfunc's auto count / 2).
 * COUNTS.csv: lo,hi,npairs per bin, distinct pairs, twobody's CSV layout.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "countpairs.h"
#include "cpu_features.h"
#include "defs.h"

static void die(const char *what, const char *detail) {
  fprintf(stderr, "corrfunc_dd_driver: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(2);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) die(path, strerror(errno));
  if (fseek(f, 0, SEEK_END) != 0) die(path, "cannot seek");
  const long len = ftell(f);
  if (len < 0) die(path, "cannot tell its size");
  rewind(f);
  char *buf = malloc((size_t)len + 1);
  if (!buf) die(path, "out of memory");
  if (fread(buf, 1, (size_t)len, f) != (size_t)len) die(path, "short read");
  fclose(f);
  buf[len] = '\0';
  *size = (size_t)len;
  return buf;
}

/* x, y, z as three float64 arrays of n points. */
static void read_points(const char *path, int64_t *n, double **xyz) {
  size_t size = 0;
  char *buf = read_file(path, &size);
  const double *data = (const double *)buf;
  int fortran = 0;
  size_t count = size / 24;
  const size_t plen = strlen(path);
  if (plen > 4 && strcmp(path + plen - 4, ".npy") == 0) {
    if (size < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) die(path, "not a .npy file");
    const int major = (unsigned char)buf[6];
    const size_t hlen = major == 1 ? (size_t)(unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8
                                   : (size_t)(unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8 |
                                         (size_t)(unsigned char)buf[10] << 16 | (size_t)(unsigned char)buf[11] << 24;
    const size_t start = (major == 1 ? 10 : 12) + hlen;
    if (start > size) die(path, "truncated .npy header");
    char *header = strndup(buf + (major == 1 ? 10 : 12), hlen);
    if (!strstr(header, "'descr': '<f8'")) die(path, "the .npy array must be float64 ('<f8')");
    fortran = strstr(header, "'fortran_order': True") != NULL;
    const char *shape = strstr(header, "'shape': (");
    unsigned long long rows = 0, cols = 0;
    if (!shape || sscanf(shape, "'shape': (%llu, %llu)", &rows, &cols) != 2 || cols != 3)
      die(path, "the .npy array must have shape (N, 3)");
    free(header);
    if (start + rows * 24 > size) die(path, "truncated .npy data");
    data = (const double *)(buf + start);
    count = (size_t)rows;
  } else if (size % 24 != 0) {
    die(path, "raw input must be float64 x,y,z rows (a multiple of 24 bytes)");
  }
  *n = (int64_t)count;
  for (int d = 0; d < 3; ++d) {
    xyz[d] = malloc(count * sizeof(double));
    if (!xyz[d]) die(path, "out of memory");
    for (size_t i = 0; i < count; ++i) xyz[d][i] = fortran ? data[d * count + i] : data[3 * i + d];
  }
  free(buf);
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: %s float|double POINTS BINFILE BOXSIZE THREADS REPEATS COUNTS.csv\n", argv[0]);
    return 2;
  }
  const int use_float = strcmp(argv[1], "float") == 0;
  if (!use_float && strcmp(argv[1], "double") != 0) die("the variant must be float or double", argv[1]);
  const char *binfile = argv[3];
  const double boxsize = atof(argv[4]);
  const int threads = atoi(argv[5]), repeats = atoi(argv[6]);
  if (!(boxsize > 0) || threads < 1 || repeats < 1) die("bad BOXSIZE, THREADS or REPEATS", NULL);

  int64_t n = 0;
  double *xyz[3];
  read_points(argv[2], &n, xyz);
  void *coords[3];
  for (int d = 0; d < 3; ++d) {
    coords[d] = xyz[d];
    if (use_float) {
      float *f = malloc((size_t)n * sizeof(float));
      if (!f) die("out of memory", NULL);
      for (int64_t i = 0; i < n; ++i) f[i] = (float)xyz[d][i];
      coords[d] = f;
    }
  }

  results_countpairs results = {0};
  double best = 1e300, spent = 0;
  for (int r = 0; r < repeats && spent < 3.0; ++r) {
    if (r > 0) free_results(&results);
    struct config_options options = get_config_options();
    options.float_type = use_float ? sizeof(float) : sizeof(double);
    options.boxsize = boxsize;
    options.periodic = 1;
    options.enable_min_sep_opt = 1;
    options.copy_particles = 1;
    options.instruction_set = get_max_usable_isa(); /* the Python wrapper's isa='fastest' */
    options.verbose = 0;
    struct extra_options extra = get_extra_options(NONE);
    const double t0 = now();
    const int status = countpairs(n, coords[0], coords[1], coords[2], n, coords[0], coords[1], coords[2],
                                  threads, 1, binfile, &results, &options, &extra);
    const double dt = now() - t0;
    if (status != EXIT_SUCCESS) die("countpairs failed", NULL);
    if (dt < best) best = dt;
    spent += dt;
  }

  FILE *out = fopen(argv[7], "w");
  if (!out) die(argv[7], strerror(errno));
  fprintf(out, "lo,hi,npairs\n");
  uint64_t total = 0;
  /* Corrfunc's bin i >= 1 holds [rupp[i-1], rupp[i]); its auto count has (i, j) and (j, i). */
  for (int i = 1; i < results.nbin; ++i) {
    const uint64_t distinct = results.npairs[i] / 2;
    total += distinct;
    fprintf(out, "%.17g,%.17g,%llu\n", results.rupp[i - 1], results.rupp[i], (unsigned long long)distinct);
  }
  fclose(out);
  printf("%s,%lld,%.17g,%d,%.6f,%llu\n", argv[1], (long long)n, results.rupp[results.nbin - 1], threads, best,
         (unsigned long long)total);
  free_results(&results);
  return 0;
}
