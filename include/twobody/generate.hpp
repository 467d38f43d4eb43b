#pragma once
// Test catalogues, deterministic for a given seed on every platform (the generator and its
// transforms are our own, not the implementation-defined std:: distributions).
#include <cstdint>

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

}  // namespace twobody
