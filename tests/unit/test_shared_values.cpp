// A graph's constant data is shared by its copies (the passes and the prepared run copy graphs; a
// model's weights must not be copied with them), and a write to one copy leaves the others as
// they were.
#include <vector>

#include "catch.hpp"
#include "gexec/ir/graph.hpp"

using namespace gexec;

TEST_CASE("constant data: copies of a graph share it, a write copies it first", "[ir]") {
  Graph g;
  Tensor t;
  t.name = "W";
  t.shape = {2, 3};
  t.constant = true;
  Init init;
  init.kind = InitKind::values;
  init.values = std::vector<double>{1, 2, 3, 4, 5, 6};
  t.init = init;
  g.add_tensor(t);

  const Graph copy = g;  // NOLINT: the copy is the point
  const double* shared = g.tensors[0].init->values.data();
  CHECK(copy.tensors[0].init->values.data() == shared);  // not copied
  CHECK(copy.tensors[0].init->values.shares(g.tensors[0].init->values));
  CHECK(copy == g);

  Graph edited = g;
  edited.tensors[0].init->values.edit()[4] = -5;
  CHECK(edited.tensors[0].init->values.data() != shared);  // copied before the write
  CHECK_FALSE(edited.tensors[0].init->values.shares(g.tensors[0].init->values));
  CHECK(edited.tensors[0].init->values[4] == -5);
  CHECK(g.tensors[0].init->values[4] == 5);  // the others as they were
  CHECK(copy.tensors[0].init->values[4] == 5);
  CHECK_FALSE(edited == g);
  edited.tensors[0].init->values.edit()[4] = 5;  // the same values in a buffer of its own: still equal
  CHECK(edited == g);

  // Taken out: moved where no copy shares it, copied where one does.
  SharedValues alone(std::vector<double>{7, 8});
  const double* before = alone.data();
  const std::vector<double> moved = std::move(alone).take();
  CHECK(moved.data() == before);
  SharedValues one(std::vector<double>{9}), other = one;
  const std::vector<double> copied = std::move(one).take();
  CHECK(copied == std::vector<double>{9});
  CHECK(other.size() == 1);
  CHECK(other[0] == 9);
}
