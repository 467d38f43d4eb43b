#pragma once
// Test catalogues, deterministic for a given seed on every platform (the generator and its
// transforms are our own, not the implementation-defined std:: distributions).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "twobody/points.hpp"

namespace twobody {

// n points uniform in [0, side)^dim.
PointSet generate_uniform_box(std::size_t n, int dim, double side, std::uint64_t seed);
// n points uniform on the sphere, as (RA, Dec) in degrees.
PointSet generate_uniform_sky(std::size_t n, std::uint64_t seed);

struct ClusterOptions {
  enum class Kind { GaussianBlobs, SoneiraPeebles } kind = Kind::SoneiraPeebles;
  std::size_t blobs = 32;   // Gaussian blobs: number of blobs
  double sigma = 0.02;      // Gaussian blobs: width as a fraction of the side (or radians on the sky)
  int eta = 4;              // Soneira–Peebles: sub-clusters per cluster
  double lambda = 2.2;      // Soneira–Peebles: radius ratio between levels
  int levels = 6;           // Soneira–Peebles: depth of the hierarchy
  double radius = 0.25;     // Soneira–Peebles: top-level radius, fraction of the side (radians on the sky)
};

// Clustered points in a periodic box [0, side)^dim (positions wrapped into the box).
PointSet generate_clustered_box(std::size_t n, int dim, double side, const ClusterOptions& c,
                                std::uint64_t seed);
// Clustered points on the sphere, as (RA, Dec) in degrees.
PointSet generate_clustered_sky(std::size_t n, const ClusterOptions& c, std::uint64_t seed);

// A concentrated catalogue in [0, side)^dim (issue 3's non-uniform case): round(fraction * n)
// points uniform in one cube holding `volume` of the box (placed at random, inside the box), the
// rest uniform in the box outside that cube; the cube's points come first. fraction 0.9, volume
// 0.01: 90 % of the points in 1 % of the volume.
PointSet generate_concentrated_box(std::size_t n, int dim, double side, double fraction, double volume,
                                   std::uint64_t seed);

// Random catalogues matched to a data catalogue (`twobody generate randoms --like DATA`): points
// uniform over the data's footprint, the catalogue a correlation function's estimators and
// jackknife regions need.

// The footprint of a catalogue on the sky: the pixels of an equal-area pixelisation that hold at
// least `min_count` of its points. The pixelisation is an "igloo" of rings (Crittenden & Turok
// 1998): ring b, about `resolution` degrees high, is cut into n_b pixels in RA, n_b the nearest
// integer to its circumference over `resolution`, and the ring edges are then placed in sin(Dec)
// so that every ring holds exactly n_b pixels of area 4π/N (N = Σ n_b). Every pixel thus has the
// same area, as HEALPix's do (which makes "an occupied pixel chosen uniformly" area-uniform),
// pixels are near-square down to the poles (a grid uniform in RA would make slivers there), and a
// point's pixel is a binary search in sin(Dec) and a division in RA: no HEALPix library needed.
class SkyMask {
 public:
  // Throws Error(Config) for a resolution outside (0, 180] degrees or min_count 0, Error(Input)
  // for an empty catalogue, a Dec outside [-90, 90] or no pixel holding min_count points.
  SkyMask(const PointSet& radec, double resolution_deg, std::size_t min_count = 1);

  std::uint64_t pixels() const { return band_start_.back(); }  // on the whole sphere
  const std::vector<std::uint64_t>& occupied() const { return occupied_; }  // sorted
  double pixel_area_deg2() const;
  double area_deg2() const { return pixel_area_deg2() * static_cast<double>(occupied_.size()); }
  double sky_fraction() const { return static_cast<double>(occupied_.size()) / static_cast<double>(pixels()); }
  // The pixel of (RA, Dec) in degrees (RA taken modulo 360).
  std::uint64_t pixel_of(double ra_deg, double dec_deg) const;
  bool contains(double ra_deg, double dec_deg) const;
  // A point uniform on the sphere within pixel `p`: uniform in RA and in sin(Dec) over its range.
  std::array<double, 2> uniform_in(std::uint64_t p, double u_ra, double u_sin) const;
  // "1234 equal-area pixels of 0.98 deg2 hold data: 1210 deg2, 2.93 % of the sky"
  std::string describe() const;

 private:
  std::vector<double> sin_edges_;           // B + 1 ring edges in sin(Dec), -1 to 1
  std::vector<std::uint32_t> ring_pixels_;  // n_b
  std::vector<std::uint64_t> band_start_;   // B + 1: first pixel of each ring, then N
  std::vector<std::uint64_t> occupied_;
  double resolution_ = 1.0;
  std::size_t min_count_ = 1;
};

// n points uniform over the mask's pixels, as (RA, Dec) in degrees: an occupied pixel chosen
// uniformly (all have one area), then a point uniform inside it.
PointSet generate_randoms_in_mask(const SkyMask& mask, std::size_t n, std::uint64_t seed);
// n points uniform in [lo_d, hi_d) per dimension.
PointSet generate_randoms_in_range(std::size_t n, const std::vector<double>& lo, const std::vector<double>& hi,
                                   std::uint64_t seed);

// Where randoms like a catalogue are drawn, and how.
struct RandomsLike {
  enum class Footprint {
    Box,    // uniform in the box [0, L_d) when `box` is given, else in the data's bounding box
    Sky,    // the data are RA, Dec (degrees): uniform over their SkyMask
    Mocks,  // RA, Dec, radial (cz, z or distance): angles over the SkyMask, the radial column
            // drawn from the data's own values (with replacement: the "shuffled" randoms of
            // survey clustering), each drawn with its point's weight when the data are weighted
  } footprint = Footprint::Box;
  std::vector<double> box;     // Box: one length per dimension (empty: the data's bounding box)
  double resolution_deg = 1.0;  // Sky, Mocks: the SkyMask's pixel side
  std::size_t min_count = 1;    // Sky, Mocks: data points that put a pixel in the footprint
};
struct GeneratedRandoms {
  PointSet points;   // unweighted, except Mocks randoms of weighted data
  std::string note;  // where they were drawn: the box, or the mask's area and sky fraction
};
// Throws Error(Config) for n = 0 or a footprint that does not fit the data (Sky: not 2 columns,
// Mocks: not 3, Box: a box of another dimension or one the data leave), Error(Input) for data
// that give no footprint (empty, one point of zero extent in every dimension without --box).
GeneratedRandoms generate_randoms_like(const PointSet& data, std::size_t n, const RandomsLike& how, std::uint64_t seed);

}  // namespace twobody
