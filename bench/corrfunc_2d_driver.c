/* Corrfunc's theory DDrppi, DDsmu, wp and xi (double precision) through their C API, for
 * scripts/compare-corrfunc-2d: the counts twobody's `rppi`, `smu`, `wp` and `xi` must reproduce in
 * every bin. Our code; it links Corrfunc's static libcountpairs_rp_pi.a / libcountpairs_s_mu.a /
 * libcountpairs_wp.a / libcountpairs_xi.a built from peer-src/Corrfunc, which is never committed.
 *
 *   corrfunc_2d_driver rppi|smu|wp|xi|rppi-mocks|smu-mocks POINTS BINFILE BOXSIZE PIMAX|MUMAX NMU THREADS COUNTS.csv
 *
 * wp, xi: periodic boxes only (Corrfunc's theory wp and xi take the analytic random counts of the
 * box); COUNTS.csv is lo,hi,npairs,wp (or xi) with npairs in distinct pairs, wp summed over |dz| <
 * PIMAX, the estimate printed to 17 digits.
 *
 * rppi-mocks, smu-mocks: Corrfunc's DDrppi_mocks / DDsmu_mocks (libcountpairs_rp_pi_mocks.a,
 * libcountpairs_s_mu_mocks.a, GSL) with the three columns RA, Dec, comoving distance
 * (is_comoving_dist = 1: the cz conversion is compared separately), BOXSIZE ignored.
 *
 * POINTS: .npy (N x 3 float64) or raw float64 x,y,z rows. BOXSIZE > 0: periodic cube; 0: open
 * (Corrfunc's periodic = 0). NMU: mu bins (ignored for rppi: Corrfunc takes npibins = (int) pimax).
 * COUNTS.csv: <outer>_lo,<outer>_hi,<inner>_lo,<inner>_hi,npairs with npairs in distinct pairs
 * (Corrfunc's auto counts halved), inner fastest: twobody's layout. Corrfunc adds N self-pairs to
 * the first bin when the first edge is 0; use bins starting above 0.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "countpairs_rp_pi.h"
#include "countpairs_s_mu.h"
#include "countpairs_wp.h"
#include "countpairs_xi.h"
#ifdef WITH_MOCKS
#include "countpairs_rp_pi_mocks.h"
#include "countpairs_s_mu_mocks.h"
#endif
#include "cpu_features.h"
#include "defs.h"

static void die(const char *what, const char *detail) {
  fprintf(stderr, "corrfunc_2d_driver: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
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
  if (argc != 9) {
    fprintf(stderr, "usage: %s rppi|smu|wp|xi|rppi-mocks|smu-mocks POINTS BINFILE BOXSIZE PIMAX|MUMAX NMU THREADS COUNTS.csv\n", argv[0]);
    return 2;
  }
  const int mocks = strstr(argv[1], "-mocks") != NULL;
  const int rppi = strncmp(argv[1], "rppi", 4) == 0;
  const int wp = strcmp(argv[1], "wp") == 0, xi = strcmp(argv[1], "xi") == 0;
  if (!rppi && !wp && !xi && strncmp(argv[1], "smu", 3) != 0) die("the statistic must be rppi, smu, wp or xi", argv[1]);
#ifndef WITH_MOCKS
  if (mocks) die("built without Corrfunc's mocks libraries", argv[1]);
#endif
  const char *binfile = argv[3];
  const double boxsize = atof(argv[4]), inner_max = atof(argv[5]);
  const int nmu = atoi(argv[6]), threads = atoi(argv[7]);
  if (boxsize < 0 || !(inner_max > 0) || threads < 1 || (!rppi && !wp && !xi && nmu < 1)) die("bad arguments", NULL);
  if ((wp || xi) && !(boxsize > 0)) die("Corrfunc's theory wp and xi need a periodic box", argv[1]);
  (void)now;

  int64_t n = 0;
  double *xyz[3];
  read_points(argv[2], &n, xyz);
  struct config_options options = get_config_options();
  options.float_type = sizeof(double);
  options.periodic = boxsize > 0;
  options.boxsize = boxsize > 0 ? boxsize : -1.0;
  options.enable_min_sep_opt = 1;
  options.copy_particles = 1;
  options.instruction_set = get_max_usable_isa();
  options.verbose = 0;
  struct extra_options extra = get_extra_options(NONE);

  // rpavg / savg beside the 2-D counts (twobody's --ravg columns).
  if (!wp && !xi) options.need_avg_sep = 1;
  FILE *out = fopen(argv[8], "w");
  if (!out) die(argv[8], strerror(errno));
#ifdef WITH_MOCKS
  if (mocks) {
    options.periodic = 0;
    options.is_comoving_dist = 1;
    if (rppi) {
      results_countpairs_mocks r = {0};
      if (countpairs_mocks(n, xyz[0], xyz[1], xyz[2], n, xyz[0], xyz[1], xyz[2], threads, 1, binfile, inner_max, 1, &r,
                           &options, &extra) != EXIT_SUCCESS)
        die("countpairs_mocks failed", NULL);
      const double dpi = r.pimax / r.npibin;
      fprintf(out, "rp_lo,rp_hi,pi_lo,pi_hi,npairs,rpavg\n");
      for (int i = 1; i < r.nbin; ++i)
        for (int k = 0; k < r.npibin; ++k)
          fprintf(out, "%.17g,%.17g,%.17g,%.17g,%llu,%.17g\n", r.rupp[i - 1], r.rupp[i], k * dpi, (k + 1) * dpi,
                  (unsigned long long)(r.npairs[i * (r.npibin + 1) + k] / 2), r.rpavg[i * (r.npibin + 1) + k]);
      free_results_mocks(&r);
    } else {
      results_countpairs_mocks_s_mu r = {0};
      if (countpairs_mocks_s_mu(n, xyz[0], xyz[1], xyz[2], n, xyz[0], xyz[1], xyz[2], threads, 1, binfile, inner_max,
                                nmu, 1, &r, &options, &extra) != EXIT_SUCCESS)
        die("countpairs_mocks_s_mu failed", NULL);
      const double dmu = r.mu_max / r.nmu_bins;
      fprintf(out, "s_lo,s_hi,mu_lo,mu_hi,npairs,savg\n");
      for (int i = 1; i < r.nsbin; ++i)
        for (int k = 0; k < r.nmu_bins; ++k)
          fprintf(out, "%.17g,%.17g,%.17g,%.17g,%llu,%.17g\n", r.supp[i - 1], r.supp[i], k * dmu, (k + 1) * dmu,
                  (unsigned long long)(r.npairs[i * (r.nmu_bins + 1) + k] / 2), r.savg[i * (r.nmu_bins + 1) + k]);
      free_results_mocks_s_mu(&r);
    }
    fclose(out);
    return 0;
  }
#endif
  if (wp) {
    results_countpairs_wp r = {0};
    if (countpairs_wp(n, xyz[0], xyz[1], xyz[2], boxsize, threads, binfile, inner_max, &r, &options, &extra) !=
        EXIT_SUCCESS)
      die("countpairs_wp failed", NULL);
    fprintf(out, "rp_lo,rp_hi,npairs,wp\n");
    for (int i = 1; i < r.nbin; ++i)
      fprintf(out, "%.17g,%.17g,%llu,%.17g\n", r.rupp[i - 1], r.rupp[i], (unsigned long long)(r.npairs[i] / 2), r.wp[i]);
    free_results_wp(&r);
  } else if (xi) {
    results_countpairs_xi r = {0};
    if (countpairs_xi(n, xyz[0], xyz[1], xyz[2], boxsize, threads, binfile, &r, &options, &extra) != EXIT_SUCCESS)
      die("countpairs_xi failed", NULL);
    fprintf(out, "r_lo,r_hi,npairs,xi\n");
    for (int i = 1; i < r.nbin; ++i)
      fprintf(out, "%.17g,%.17g,%llu,%.17g\n", r.rupp[i - 1], r.rupp[i], (unsigned long long)(r.npairs[i] / 2), r.xi[i]);
    free_results_xi(&r);
  } else if (rppi) {
    results_countpairs_rp_pi r = {0};
    if (countpairs_rp_pi(n, xyz[0], xyz[1], xyz[2], n, xyz[0], xyz[1], xyz[2], threads, 1, binfile, inner_max, &r,
                         &options, &extra) != EXIT_SUCCESS)
      die("countpairs_rp_pi failed", NULL);
    const double dpi = r.pimax / r.npibin;
    fprintf(out, "rp_lo,rp_hi,pi_lo,pi_hi,npairs,rpavg\n");
    for (int i = 1; i < r.nbin; ++i)
      for (int k = 0; k < r.npibin; ++k)
        fprintf(out, "%.17g,%.17g,%.17g,%.17g,%llu,%.17g\n", r.rupp[i - 1], r.rupp[i], k * dpi, (k + 1) * dpi,
                (unsigned long long)(r.npairs[i * (r.npibin + 1) + k] / 2), r.rpavg[i * (r.npibin + 1) + k]);
    free_results_rp_pi(&r);
  } else {
    results_countpairs_s_mu r = {0};
    if (countpairs_s_mu(n, xyz[0], xyz[1], xyz[2], n, xyz[0], xyz[1], xyz[2], threads, 1, binfile, inner_max, nmu, &r,
                        &options, &extra) != EXIT_SUCCESS)
      die("countpairs_s_mu failed", NULL);
    const double dmu = r.mu_max / r.nmu_bins;
    fprintf(out, "s_lo,s_hi,mu_lo,mu_hi,npairs,savg\n");
    for (int i = 1; i < r.nsbin; ++i)
      for (int k = 0; k < r.nmu_bins; ++k)
        fprintf(out, "%.17g,%.17g,%.17g,%.17g,%llu,%.17g\n", r.supp[i - 1], r.supp[i], k * dmu, (k + 1) * dmu,
                (unsigned long long)(r.npairs[i * (r.nmu_bins + 1) + k] / 2), r.savg[i * (r.nmu_bins + 1) + k]);
    free_results_s_mu(&r);
  }
  fclose(out);
  return 0;
}
