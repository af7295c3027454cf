// Where writing an output path really goes. A symbolic link is followed to the file it names,
// which is then written (replaced, or created) in its own folder, so that the link stays a link;
// a FIFO or a character device (a terminal, /dev/null) is written in place, never renamed over;
// this process's own descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N) are written on the
// descriptor itself, so that `--csv /dev/stdout > out.txt` lands in out.txt after what the
// process printed there before.
#pragma once

#include <string>

#include "gexec/status.hpp"

namespace gexec {

struct OutputTarget {
  enum class Kind {
    file,        // a regular file, or nothing yet: `path` is replaced or created atomically
    stream,      // a FIFO or a character device at `path`: opened and written in place
    descriptor,  // this process's descriptor `fd`, open for writing: written on it
  };
  Kind kind = Kind::file;
  std::string path;  // the end of the links (file, stream); the path as given (descriptor)
  int fd = -1;       // descriptor only
};

// The target of `path`, following at most 40 links. bad_input naming `path` when it cannot be
// written: it ends at a folder, a socket or a block device, a loop of links, a descriptor of
// another process, or one of this process's descriptors that is closed or open for reading only.
// A path to nothing (a dangling link included) is a file to create there.
Result<OutputTarget> resolve_output(const std::string& path);

// A stream or descriptor target open for writing in place (a new descriptor, close-on-exec, that
// the caller closes); a FIFO that no process reads is a runtime error, not a wait. `path` names
// it in messages.
Result<int> open_output_in_place(const OutputTarget& target, const std::string& path);

}  // namespace gexec
