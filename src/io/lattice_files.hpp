#pragma once
// The lattice map writers that need an optional library (write_lattice_map picks by extension):
// HDF5 (hdf5_lattice_writer.cpp, or a refusal without libhdf5) and PNG slices (png_slice.cpp, or a
// refusal without libpng).
#include <string>

#include <nlohmann/json.hpp>

#include "twobody/lattice.hpp"

namespace twobody {

// .h5: dataset /map of shape (nz, ny, nx) (float32 or float64; complex as h5py's compound {r, i}),
// chunked by z-slabs, with attributes origin, spacing, shape (x, y, z order) and meta (the JSON of
// the .npy sidecar); /excluded (uint8, same shape) when some node is excluded.
void write_hdf5_lattice(const std::string& path, const LatticeMap& map, const nlohmann::json& meta);

// The middle z-slice (a 2-D map: the map) as an 8-bit RGB PNG: a signed map in a blue–white–red
// scale symmetric about 0, a non-negative one from black to white, a complex one by its magnitude.
void write_png_slice(const std::string& path, const LatticeMap& map);

}  // namespace twobody
