// The C++ object behind a gexec.Graph, Executor or Array, checked. `cls.__new__(cls)` makes an
// instance without running __init__, and pybind11 hands such an instance's methods memory that
// holds no object (it allocates it on first use, uninitialised): a crash. Every method reaches
// its object through cpp_object, which raises TypeError instead.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <typeinfo>
#include <utility>

namespace gexec::py_binding {

namespace py = pybind11;

template <class T>
T& cpp_object(py::handle obj, const char* cls) {
  if (!py::isinstance<T>(obj))
    throw py::type_error(std::string("expected a ") + cls + ", got " +
                         std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
  auto* inst = reinterpret_cast<py::detail::instance*>(obj.ptr());
  py::detail::value_and_holder vh = inst->get_value_and_holder(py::detail::get_type_info(typeid(T)), false);
  if (!vh || !vh.holder_constructed()) {
    const std::string name = cls;
    const std::string how =
        name == "gexec.Array" ? "gexec.Arrays come from Executor.run" : "create one with " + name + "(...)";
    throw py::type_error("this " + name + " holds nothing: it was made by __new__ without __init__ (" + how + ")");
  }
  return *static_cast<T*>(vh.value_ptr());
}

// A member function as a method whose self is checked by cpp_object.
template <class T, class R, class... A>
auto method(R (T::*f)(A...), const char* cls) {
  return [f, cls](py::handle self, A... a) -> R { return (cpp_object<T>(self, cls).*f)(std::forward<A>(a)...); };
}
template <class T, class R, class... A>
auto method(R (T::*f)(A...) const, const char* cls) {
  return [f, cls](py::handle self, A... a) -> R {
    return (std::as_const(cpp_object<T>(self, cls)).*f)(std::forward<A>(a)...);
  };
}

}  // namespace gexec::py_binding
