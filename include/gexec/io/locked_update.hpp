// Read-modify-write of a small file that several processes may update at once (the tuning
// cache): under an exclusive lock on the file's folder, the current text is read, the caller
// merges into it, and the result replaces the file atomically, so that no writer's additions
// are lost to another's copy.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "gexec/status.hpp"

namespace gexec {

// `update` gets the file's current text (nullopt when there is no file, or it cannot be read as
// one) and returns the new text, or an error that leaves the file as it is. The file at the end
// of `path`'s links is replaced (write_file_atomic); the lock is a flock on its folder, held
// while reading and writing, and skipped where the folder cannot be opened or locked.
Status update_file_locked(const std::string& path,
                          const std::function<Result<std::string>(const std::optional<std::string>&)>& update);

}  // namespace gexec
