// The offsets of a stable counting sort done in parallel over pieces: each piece counts its items per
// bucket, then each piece's part of each bucket gets its place (buckets in order, within a bucket the
// pieces in order), so scattering each piece's items in its own order keeps the input order within a
// bucket. Used by dispatch_order (buckets: priority levels) and the repeated-id check of the job readers
// (buckets: an id hash's top byte).
#pragma once

#include <cstddef>
#include <vector>

namespace colmatch {

/// `counts[p][b]` (piece p's items in bucket b, for b < buckets) become where piece p's part of bucket b
/// starts; returns each bucket's start and, last, the number of items (buckets + 1 values).
/// O(pieces x buckets). `Counts` is any indexable row of size_t (std::vector, std::array).
template <class Counts>
std::vector<size_t> bucket_starts(std::vector<Counts>& counts, size_t buckets) {
  std::vector<size_t> start(buckets + 1, 0);
  size_t total = 0;
  for (size_t b = 0; b < buckets; ++b) {
    start[b] = total;
    for (Counts& piece : counts) {
      const size_t n = piece[b];
      piece[b] = total;
      total += n;
    }
  }
  start[buckets] = total;
  return start;
}

}  // namespace colmatch
