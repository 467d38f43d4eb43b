/* Corrfunc's DDtheta_mocks (angular pair counts on the sky), timed through its public C API
 * (countpairs_theta_mocks in mocks/DDtheta_mocks/countpairs_theta_mocks.h), for scripts/bench-wtheta.
 * Our code; it links Corrfunc's static libcountpairs_theta_mocks.a built from peer-src/Corrfunc,
 * which is never committed.
 *
 *   corrfunc_theta_driver float|double auto|cross CAT1 CAT2|- BINFILE THREADS COUNTS.csv
 *
 * CAT: .npy (2-D float64, N x 2 columns RA, Dec in degrees, C or Fortran order), as written by
 * `twobody generate uniform --sky`, or raw float64 RA,Dec rows (N*16 bytes). auto: DD of CAT1
 * (CAT2 is ignored, give -); cross: CAT1 x CAT2. BINFILE: Corrfunc's format, 'lo hi' per line, in
 * degrees. `float` hands Corrfunc float32 copies of RA and Dec (its default as users run it: the
 * Python wrapper picks the kernels from the arrays' dtype), `double` the float64 ones; one library
 * holds both kernels and options.float_type chooses.
 * Options as the Python wrapper's defaults (DDtheta_mocks(...) in Corrfunc/mocks/DDtheta_mocks.py):
 * link_in_dec and link_in_ra, refine factors 2, 2, max_cells_per_dim 100, no <theta>, no fast_acos,
 * particles copied, min-separation optimisation, the fastest instruction set the CPU has.
 *
 * stdout, one CSV line: variant,mode,n1,n2,threads,seconds,npairs
 *   seconds: one call of countpairs_theta_mocks (gridding included; file reading and the float32
 *   conversion excluded); npairs: pairs in all bins (distinct pairs for auto: Corrfunc's auto count
 *   has (i, j) and (j, i), halved here).
 * COUNTS.csv: lo,hi,npairs per bin (distinct pairs for auto), twobody's CSV layout.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "countpairs_theta_mocks.h"
#include "cpu_features.h"
#include "defs.h"

static void die(const char *what, const char *detail) {
  fprintf(stderr, "corrfunc_theta_driver: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
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

/* RA and Dec (degrees) as two float64 arrays of n points. */
static void read_sky(const char *path, int64_t *n, double **radec) {
  size_t size = 0;
  char *buf = read_file(path, &size);
  const double *data = (const double *)buf;
  int fortran = 0;
  size_t count = size / 16;
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
    if (!shape || sscanf(shape, "'shape': (%llu, %llu)", &rows, &cols) != 2 || cols != 2)
      die(path, "the .npy array must have shape (N, 2): RA, Dec");
    free(header);
    if (start + rows * 16 > size) die(path, "truncated .npy data");
    data = (const double *)(buf + start);
    count = (size_t)rows;
  } else if (size % 16 != 0) {
    die(path, "raw input must be float64 RA,Dec rows (a multiple of 16 bytes)");
  }
  *n = (int64_t)count;
  for (int d = 0; d < 2; ++d) {
    radec[d] = malloc((count ? count : 1) * sizeof(double));
    if (!radec[d]) die(path, "out of memory");
    for (size_t i = 0; i < count; ++i) radec[d][i] = fortran ? data[d * count + i] : data[2 * i + d];
  }
  free(buf);
}

/* The coordinates Corrfunc gets: the float64 arrays, or float32 copies of them. */
static void *as_type(double *x, int64_t n, int use_float) {
  if (!use_float) return x;
  float *f = malloc((size_t)(n ? n : 1) * sizeof(float));
  if (!f) die("out of memory", NULL);
  for (int64_t i = 0; i < n; ++i) f[i] = (float)x[i];
  return f;
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: %s float|double auto|cross CAT1 CAT2|- BINFILE THREADS COUNTS.csv\n", argv[0]);
    return 2;
  }
  const int use_float = strcmp(argv[1], "float") == 0;
  if (!use_float && strcmp(argv[1], "double") != 0) die("the variant must be float or double", argv[1]);
  const int autocorr = strcmp(argv[2], "auto") == 0;
  if (!autocorr && strcmp(argv[2], "cross") != 0) die("the mode must be auto or cross", argv[2]);
  const char *binfile = argv[5];
  const int threads = atoi(argv[6]);
  if (threads < 1) die("bad THREADS", argv[6]);

  int64_t n1 = 0, n2 = 0;
  double *c1[2], *c2[2];
  read_sky(argv[3], &n1, c1);
  void *ra1 = as_type(c1[0], n1, use_float), *dec1 = as_type(c1[1], n1, use_float);
  void *ra2 = ra1, *dec2 = dec1;
  n2 = n1;
  if (!autocorr) {
    read_sky(argv[4], &n2, c2);
    ra2 = as_type(c2[0], n2, use_float);
    dec2 = as_type(c2[1], n2, use_float);
  }

  struct config_options options = get_config_options();
  options.float_type = use_float ? sizeof(float) : sizeof(double);
  options.verbose = 0;
  options.need_avg_sep = 0;      /* output_thetaavg=False */
  options.fast_acos = 0;         /* fast_acos=False */
  options.link_in_dec = 1;       /* link_in_dec=True */
  options.link_in_ra = 1;        /* link_in_ra=True */
  options.enable_min_sep_opt = 1;
  options.copy_particles = 1;
  options.c_api_timer = 0;
  reset_bin_refine_factors(&options); /* ra_refine_factor=2, dec_refine_factor=2 */
  set_max_cells(&options, 100);       /* max_cells_per_dim=100 */
  options.instruction_set = get_max_usable_isa(); /* isa='fastest' */
  struct extra_options extra = get_extra_options(NONE);

  results_countpairs_theta results = {0};
  const double t0 = now();
  /* Corrfunc's argument order: phi (RA), then theta (Dec). */
  const int status = countpairs_theta_mocks(n1, ra1, dec1, n2, ra2, dec2, threads, autocorr, binfile, &results,
                                            &options, &extra);
  const double dt = now() - t0;
  if (status != EXIT_SUCCESS) die("countpairs_theta_mocks failed", NULL);

  FILE *out = fopen(argv[7], "w");
  if (!out) die(argv[7], strerror(errno));
  fprintf(out, "lo,hi,npairs\n");
  uint64_t total = 0;
  /* Corrfunc's bin i >= 1 holds [theta_upp[i-1], theta_upp[i]). */
  for (int i = 1; i < results.nbin; ++i) {
    const uint64_t count = autocorr ? results.npairs[i] / 2 : results.npairs[i];
    total += count;
    fprintf(out, "%.17g,%.17g,%llu\n", results.theta_upp[i - 1], results.theta_upp[i], (unsigned long long)count);
  }
  fclose(out);
  printf("%s,%s,%lld,%lld,%d,%.6f,%llu\n", argv[1], argv[2], (long long)n1, (long long)n2, threads, dt,
         (unsigned long long)total);
  free_results_countpairs_theta(&results);
  return 0;
}
