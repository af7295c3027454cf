# Writes OUTPUT, a C++ source that defines `extern const char gexec::cuda::NAME[]` as the exact
# text of INPUT, for a file that the library needs at run time as text (activations.cuh, which
# NVRTC compiles with the generated kernels) without a source tree beside the installed binary.
# Run at build time (cmake -P), so that an edit of INPUT rebuilds it.
#   cmake -DINPUT=file -DOUTPUT=file.cpp -DNAME=identifier -P embed_text.cmake
foreach(var INPUT OUTPUT NAME)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_text.cmake: ${var} is not set")
  endif()
endforeach()
file(READ "${INPUT}" text)
# A raw string literal holds the text as it is; its closing sequence must not occur in it.
set(delim "gexec_embedded")
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "embed_text.cmake: ${INPUT} contains \")${delim}\\\"\", which ends the raw string")
endif()
get_filename_component(input_name "${INPUT}" NAME)
set(content "// Generated from ${input_name} by cmake/embed_text.cmake at build time: do not edit.
namespace gexec::cuda {
extern const char ${NAME}[];
const char ${NAME}[] = R\"${delim}(${text})${delim}\";
}  // namespace gexec::cuda
")
file(WRITE "${OUTPUT}" "${content}")
