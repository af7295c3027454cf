# ONNX input (src/onnx): protobuf from the distribution and ONNX's own schema, onnx.proto, compiled
# by protoc at build time into the build tree. Sets GEXEC_ONNX (ON when it is built) and
# GEXEC_ONNX_WHY (the reason when it is not), and defines the library gexec_onnx.
#
# onnx.proto is taken from, in order: -DGEXEC_ONNX_PROTO=PATH; libonnx-dev's include folder (its
# CMake package, else /usr/include/onnx); the Python onnx package (`import onnx`). Its package is
# renamed to gexec.onnx_pb: the wire format does not depend on it, and a process that also loads
# libonnx or Python's onnx (the Python module's tests do) then holds no second onnx::ModelProto.
option(GEXEC_ONNX "Build ONNX model input (needs protobuf, protoc and onnx.proto); default: on where found" ON)
set(GEXEC_ONNX_PROTO "" CACHE FILEPATH "The onnx.proto to compile (default: libonnx-dev's, else the Python onnx package's)")
set(GEXEC_ONNX_WHY "")
set(GEXEC_PROTOBUF_CONFIG OFF)

if(NOT GEXEC_ONNX)
  set(GEXEC_ONNX_WHY "configured with -DGEXEC_ONNX=OFF")
  return()
endif()

# protobuf: its CMake package (newer protobuf, which needs abseil's targets), else CMake's module.
find_package(protobuf CONFIG QUIET)
if(protobuf_FOUND AND TARGET protobuf::protoc AND TARGET protobuf::libprotobuf-lite)
  get_target_property(_gexec_protoc protobuf::protoc IMPORTED_LOCATION_RELEASE)
  if(NOT _gexec_protoc)
    get_target_property(_gexec_protoc protobuf::protoc IMPORTED_LOCATION_NOCONFIG)
  endif()
  if(NOT _gexec_protoc)
    set(_gexec_protoc $<TARGET_FILE:protobuf::protoc>)
  endif()
  set(_gexec_protobuf_version ${protobuf_VERSION})
  set(_gexec_protobuf_lib protobuf::libprotobuf-lite)
  set(GEXEC_PROTOBUF_CONFIG ON)
else()
  find_package(Protobuf QUIET)
  if(Protobuf_FOUND AND Protobuf_PROTOC_EXECUTABLE AND Protobuf_LITE_LIBRARY)
    set(_gexec_protoc ${Protobuf_PROTOC_EXECUTABLE})
    set(_gexec_protobuf_version ${Protobuf_VERSION})
    if(TARGET protobuf::libprotobuf-lite)
      set(_gexec_protobuf_lib protobuf::libprotobuf-lite)
    else()
      set(_gexec_protobuf_lib ${Protobuf_LITE_LIBRARIES})
    endif()
  endif()
endif()
if(NOT _gexec_protoc)
  set(GEXEC_ONNX "OFF")
  set(GEXEC_ONNX_WHY "protobuf (headers, library and protoc) not found; sudo apt-get install libprotobuf-dev protobuf-compiler")
  return()
endif()

# protoc must be the library's version, or the generated code does not compile against its headers.
if(NOT _gexec_protoc MATCHES "^\\$<")
  execute_process(COMMAND ${_gexec_protoc} --version OUTPUT_VARIABLE _gexec_protoc_out
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _gexec_protoc_rc)
  string(REGEX MATCH "[0-9]+\\.[0-9]+(\\.[0-9]+)?" _gexec_protoc_version "${_gexec_protoc_out}")
  if(NOT _gexec_protoc_rc EQUAL 0)
    set(GEXEC_ONNX "OFF")
    set(GEXEC_ONNX_WHY "${_gexec_protoc} does not run (${_gexec_protoc_rc})")
    return()
  endif()
  # protoc 3.21 says 3.21.12, its library too; protoc 22+ says 22.x while the library says 4.22.x.
  string(REGEX REPLACE "^[34]\\." "" _gexec_lib_minor "${_gexec_protobuf_version}")
  string(REGEX REPLACE "^3\\." "" _gexec_protoc_minor "${_gexec_protoc_version}")
  if(_gexec_protobuf_version AND NOT _gexec_protoc_minor STREQUAL _gexec_lib_minor
     AND NOT _gexec_protoc_version STREQUAL _gexec_protobuf_version)
    set(GEXEC_ONNX "OFF")
    set(GEXEC_ONNX_WHY "protoc ${_gexec_protoc} is ${_gexec_protoc_version} but the protobuf library is ${_gexec_protobuf_version}")
    return()
  endif()
endif()

# onnx.proto.
set(_gexec_proto "${GEXEC_ONNX_PROTO}")
set(_gexec_proto_from "-DGEXEC_ONNX_PROTO")
if(NOT _gexec_proto)
  find_package(ONNX CONFIG QUIET)
  foreach(dir IN ITEMS ${ONNX_INCLUDE_DIRS} /usr/include /usr/local/include)
    if(EXISTS "${dir}/onnx/onnx.proto")
      set(_gexec_proto "${dir}/onnx/onnx.proto")
      set(_gexec_proto_from "libonnx-dev")
      break()
    endif()
  endforeach()
endif()
if(NOT _gexec_proto)
  foreach(py IN ITEMS ${Python3_EXECUTABLE} python3 /usr/bin/python3)
    execute_process(COMMAND ${py} -c "import onnx, os; print(os.path.dirname(onnx.__file__))"
                    OUTPUT_VARIABLE _gexec_onnx_py OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND EXISTS "${_gexec_onnx_py}/onnx.proto")
      set(_gexec_proto "${_gexec_onnx_py}/onnx.proto")
      set(_gexec_proto_from "the Python onnx package (${py})")
      break()
    endif()
  endforeach()
endif()
if(NOT _gexec_proto OR NOT EXISTS "${_gexec_proto}")
  set(GEXEC_ONNX "OFF")
  if(GEXEC_ONNX_PROTO)
    set(GEXEC_ONNX_WHY "GEXEC_ONNX_PROTO=${GEXEC_ONNX_PROTO} does not exist")
  else()
    set(GEXEC_ONNX_WHY "onnx.proto not found (libonnx-dev, the Python onnx package, or -DGEXEC_ONNX_PROTO=PATH); sudo apt-get install libonnx-dev")
  endif()
  return()
endif()

# The schema under gexec's own package name; onnx.in.proto's placeholder (ONNX_NAMESPACE builds)
# and onnx-ml.proto (a superset, the same wire format) read the same.
file(READ "${_gexec_proto}" _gexec_proto_text)
string(REGEX REPLACE "\npackage [A-Za-z0-9_.{}]+;" "\npackage gexec.onnx_pb;" _gexec_proto_text "${_gexec_proto_text}")
if(NOT _gexec_proto_text MATCHES "\npackage gexec.onnx_pb;" OR NOT _gexec_proto_text MATCHES "message ModelProto")
  set(GEXEC_ONNX "OFF")
  set(GEXEC_ONNX_WHY "${_gexec_proto} is not ONNX's schema (no package line or no ModelProto)")
  return()
endif()
set(_gexec_gen "${CMAKE_CURRENT_BINARY_DIR}/generated/onnx")
# Written through a copy so that an unchanged schema keeps its time stamp (no rebuild per configure).
file(WRITE "${_gexec_gen}/gexec_onnx.proto.new" "${_gexec_proto_text}")
configure_file("${_gexec_gen}/gexec_onnx.proto.new" "${_gexec_gen}/gexec_onnx.proto" COPYONLY)
add_custom_command(
  OUTPUT "${_gexec_gen}/gexec_onnx.pb.cc" "${_gexec_gen}/gexec_onnx.pb.h"
  COMMAND ${_gexec_protoc} --cpp_out=${_gexec_gen} -I${_gexec_gen} ${_gexec_gen}/gexec_onnx.proto
  DEPENDS "${_gexec_gen}/gexec_onnx.proto"
  COMMENT "protoc: ONNX's schema (${_gexec_proto})"
  VERBATIM)

# The generated classes' header and protobuf: private to the front end (the rest of gexec sees only
# include/gexec/onnx), and to the tests that build models with them.
add_library(gexec_onnx_schema INTERFACE)
target_include_directories(gexec_onnx_schema SYSTEM INTERFACE "$<BUILD_INTERFACE:${_gexec_gen}>")
if(Protobuf_INCLUDE_DIRS)
  target_include_directories(gexec_onnx_schema SYSTEM INTERFACE "$<BUILD_INTERFACE:${Protobuf_INCLUDE_DIRS}>")
endif()
target_link_libraries(gexec_onnx_schema INTERFACE ${_gexec_protobuf_lib})

file(GLOB GEXEC_ONNX_SOURCES CONFIGURE_DEPENDS src/onnx/*.cpp)
add_library(gexec_onnx STATIC ${GEXEC_ONNX_SOURCES} "${_gexec_gen}/gexec_onnx.pb.cc")
target_include_directories(gexec_onnx PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(gexec_onnx PUBLIC gexec_core PRIVATE $<BUILD_INTERFACE:gexec_onnx_schema> ${_gexec_protobuf_lib})
# Generated code is not ours to warn about.
set_source_files_properties("${_gexec_gen}/gexec_onnx.pb.cc" PROPERTIES COMPILE_OPTIONS "-w")
set(GEXEC_ONNX_SUMMARY "protobuf ${_gexec_protobuf_version}, onnx.proto from ${_gexec_proto_from}: ${_gexec_proto}")
