#pragma once
// The staged copies' start-up (staged_upload.cpp), apart from staged_upload.hpp, which every
// device buffer includes: only the backend's start-up calls it.

namespace twobody::cuda {

// This device's two pinned buffers made now, not at its first large copy (pinning 64 MB costs tens
// of milliseconds: a warm-up beside the reading pays it). Nothing when copies are not staged.
void prepare_staging();

}  // namespace twobody::cuda
