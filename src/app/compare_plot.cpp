// `gexec compare --plot FILE.png` (compare.hpp): the ratios drawn by python3 with matplotlib, which
// gexec does not link: the comparison goes to python3 as the JSON of --json, the PNG comes back
// through a temporary file and is written like every other output (output_file.hpp).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gexec/app/compare.hpp"
#include "output_file.hpp"

namespace gexec {
namespace {

// One point per row with a ratio, one series per NEW file, over the union of the points; each
// series' noise band shaded around 1.
constexpr const char* kProgram = R"PY(
import json, sys
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except Exception as e:
    sys.stderr.write("matplotlib is not available to python3 (%s); install it (Debian: python3-matplotlib)" % e)
    sys.exit(3)
d = json.load(open(sys.argv[1]))
keys = []
for c in d["comparisons"]:
    for r in c["rows"]:
        if r["point"] not in keys:
            keys.append(r["point"])
at = {k: i for i, k in enumerate(keys)}
fig, ax = plt.subplots(figsize=(max(6.0, 0.3 * len(keys)), 4.5))
for c in d["comparisons"]:
    rows = [r for r in c["rows"] if r["ratio"] is not None]
    xs = [at[r["point"]] for r in rows]
    line, = ax.plot(xs, [r["ratio"] for r in rows], "o", label=c["new"])
    ax.vlines(xs, [1 / (1 + r["band"]) for r in rows], [1 + r["band"] for r in rows], colors=line.get_color(),
              alpha=0.3, linewidth=6)
ax.axhline(1.0, color="black", linewidth=0.6)
ax.set_xticks(range(len(keys)))
ax.set_xticklabels(keys, rotation=90, fontsize=6)
ax.set_ylabel("NEW / BASE median time (bars: noise band)")
ax.set_title("gexec compare against " + d["base"])
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
)PY";

// A temporary file, removed when it goes out of scope.
struct TempFile {
  std::string path;
  explicit TempFile(const char* suffix) {
    std::string t = (std::filesystem::temp_directory_path() / "gexec_compare_XXXXXX").string() + suffix;
    const int fd = ::mkstemps(t.data(), int(std::string(suffix).size()));
    if (fd >= 0) ::close(fd), path = t;
  }
  ~TempFile() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

Status compare_plot(const std::vector<Comparison>& cs, const std::string& path) {
  TempFile data(".json"), png(".png"), errors(".txt");
  if (data.path.empty() || png.path.empty() || errors.path.empty())
    return runtime_error("cannot create a temporary file in " + std::filesystem::temp_directory_path().string());
  std::ofstream(data.path) << compare_json(cs, 0);
  const pid_t pid = ::fork();
  if (pid < 0) return runtime_error("cannot start python3 (fork failed)");
  if (pid == 0) {
    if (FILE* e = std::freopen(errors.path.c_str(), "w", stderr); !e) std::_Exit(127);
    if (FILE* o = std::freopen("/dev/null", "w", stdout); !o) std::_Exit(127);
    ::execlp("python3", "python3", "-c", kProgram, data.path.c_str(), png.path.c_str(), static_cast<char*>(nullptr));
    std::fputs("python3 was not found on PATH", stderr);
    std::_Exit(127);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) < 0) return runtime_error("waiting for python3 failed");
  std::string why = read_all(errors.path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    if (const size_t nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);  // the last line
    return runtime_error(why.empty() ? "python3 failed drawing the plot" : why);
  }
  const std::string image = read_all(png.path);
  if (image.empty()) return runtime_error("python3 wrote no image");
  return write_output_file(path, image);
}

}  // namespace gexec
