# assocgen-config.cmake: the CMake package of assocgen, a generator of specialized CUDA C kernels.
#
#   find_package(assocgen REQUIRED)     # -Dassocgen_DIR="$(assocgen --cmake-dir)"
#   assocgen_add_library(kernels SPEC spec.toml)
#   target_link_libraries(app PRIVATE kernels)
#
# assocgen_add_library(<target> SPEC <file> [PREFIX <prefix>] [SINGLE_HEADER] [OUTPUT_DIR <dir>])
#
#   Generates the kernels of the spec <file> (relative: to the current source folder) at build
#   time into <dir> (relative: to the current binary folder; default
#   ${CMAKE_CURRENT_BINARY_DIR}/assocgen/<target>) and builds them into the static library
#   <target>.  Linking <target> gives the folder of the generated header as include path, and the
#   CUDA runtime (CUDA::cudart).  PREFIX overrides the spec's symbol prefix.  SINGLE_HEADER makes
#   the generator write one stb-style <prefix>.h; the library is then built from a stub .cu that
#   defines <PREFIX>_IMPLEMENTATION and includes it.
#
#   The outputs are learned at configure time (`assocgen --list-files`); the spec is a configure
#   dependency (a spec that gains or loses an instance re-runs CMake), and the spec plus the
#   generator's own files (`assocgen --print-deps`: templates, modules) are build dependencies of
#   the generation step.  A mistake in the spec stops the configure with the generator's message.
#
#   The library gets CUDA_STANDARD 17, and CUDA_ARCHITECTURES 90 unless the project chose
#   architectures (CMAKE_CUDA_ARCHITECTURES set by the project or on the command line, or the
#   CUDAARCHS environment variable): the kernels need sm_80 or newer.  Set the target's
#   CUDA_ARCHITECTURES property after the call to choose others.
#
#   Target properties for the caller: ASSOCGEN_HEADER (the header's path), ASSOCGEN_OUTPUT_DIR,
#   ASSOCGEN_PREFIX, ASSOCGEN_SPEC, ASSOCGEN_SOURCES (the generated .cu files; in SINGLE_HEADER
#   mode, the stub).
#
# ASSOCGEN_COMMAND (cache, a list): the generator's command line.  Default: the `assocgen`
# program (looked for beside this package's Python first, then on the PATH), else
# `${Python3_EXECUTABLE} -m assocgen`.  Set it to choose another, e.g.
# -DASSOCGEN_COMMAND="/path/to/python3;-m;assocgen".

if(CMAKE_VERSION VERSION_LESS 3.21)
  set(assocgen_FOUND FALSE)
  set(assocgen_NOT_FOUND_MESSAGE "the assocgen CMake package needs CMake 3.21 or newer (this is ${CMAKE_VERSION})")
  return()
endif()
# (find_package gives this file its own policy scope; the function below keeps these settings)
cmake_policy(VERSION 3.21...3.31)

# This folder is <assocgen package>/cmake.  Every command runs here: `python -m assocgen` puts
# its working folder first on sys.path, and a folder named assocgen there (as the default output
# folders ${CMAKE_CURRENT_BINARY_DIR}/assocgen/<target> are) would shadow the package.
set_property(GLOBAL PROPERTY ASSOCGEN_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

if(NOT DEFINED assocgen_VERSION OR assocgen_VERSION STREQUAL "")
  include("${CMAKE_CURRENT_LIST_DIR}/assocgen-config-version.cmake")
  set(assocgen_VERSION "${PACKAGE_VERSION}")
endif()

# ---- the CUDA runtime the libraries link
if(NOT TARGET CUDA::cudart)
  find_package(CUDAToolkit QUIET)
endif()
if(NOT TARGET CUDA::cudart)
  set(assocgen_FOUND FALSE)
  set(assocgen_NOT_FOUND_MESSAGE
      "assocgen needs the CUDA toolkit (find_package(CUDAToolkit) did not find it; set CUDAToolkit_ROOT, "
      "or CMAKE_CUDA_COMPILER to its nvcc)")
  return()
endif()

# ---- the generator's command line
set(_assocgen_user_command "${ASSOCGEN_COMMAND}")
if(NOT ASSOCGEN_COMMAND)
  set(_assocgen_hints "")
  # installed in a Python environment: <prefix>/lib/pythonX.Y/site-packages/assocgen/cmake, and
  # the console script of that same environment is <prefix>/bin/assocgen
  if(CMAKE_CURRENT_LIST_DIR MATCHES "^(.*)/lib(64)?/python[^/]*/(site|dist)-packages/assocgen/cmake$")
    set(_assocgen_hints HINTS "${CMAKE_MATCH_1}/bin")
  endif()
  find_program(_assocgen_program NAMES assocgen ${_assocgen_hints} NO_CACHE)
  if(_assocgen_program)
    set(ASSOCGEN_COMMAND "${_assocgen_program}")
  else()
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
      set(ASSOCGEN_COMMAND "${Python3_EXECUTABLE};-m;assocgen")
    endif()
  endif()
  unset(_assocgen_program)
  unset(_assocgen_hints)
endif()

get_property(_assocgen_checked GLOBAL PROPERTY _ASSOCGEN_CHECKED_COMMAND)
if(NOT ASSOCGEN_COMMAND)
  set(assocgen_FOUND FALSE)
  set(assocgen_NOT_FOUND_MESSAGE
      "found neither the assocgen program nor a Python 3 interpreter to run `python3 -m assocgen`: "
      "install the generator (pip install assocgen), or set ASSOCGEN_COMMAND to its command line")
  unset(_assocgen_checked)
  unset(_assocgen_user_command)
  return()
elseif(NOT _assocgen_checked STREQUAL ASSOCGEN_COMMAND)
  # the check, once a configure: the command runs and is a version of this package
  execute_process(COMMAND ${ASSOCGEN_COMMAND} --version
                  WORKING_DIRECTORY "${CMAKE_CURRENT_LIST_DIR}"
                  RESULT_VARIABLE _assocgen_rc OUTPUT_VARIABLE _assocgen_out ERROR_VARIABLE _assocgen_err
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT _assocgen_rc EQUAL 0)
    string(REPLACE ";" " " _assocgen_shown "${ASSOCGEN_COMMAND}")
    if(NOT _assocgen_err STREQUAL "")
      string(REGEX REPLACE "\n" "\n    " _assocgen_err "\n    ${_assocgen_err}")
    endif()
    message(FATAL_ERROR
      "assocgen: the generator does not run: "
      "`${_assocgen_shown} --version` failed (${_assocgen_rc})${_assocgen_err}\n"
      "Install it (pip install assocgen, or pip install -e <checkout>), or set ASSOCGEN_COMMAND "
      "to its command line (a list), e.g. -DASSOCGEN_COMMAND=\"/path/to/python3;-m;assocgen\".")
  endif()
  if(NOT _assocgen_out MATCHES "([0-9][^ ]*)$" OR NOT CMAKE_MATCH_1 STREQUAL assocgen_VERSION)
    string(REPLACE ";" " " _assocgen_shown "${ASSOCGEN_COMMAND}")
    message(WARNING
      "assocgen: ASSOCGEN_COMMAND (${_assocgen_shown}) says \"${_assocgen_out}\", but this CMake "
      "package (${CMAKE_CURRENT_LIST_DIR}) is version ${assocgen_VERSION}: two installations? Set "
      "ASSOCGEN_COMMAND to the one that goes with this package.")
  endif()
  set_property(GLOBAL PROPERTY _ASSOCGEN_CHECKED_COMMAND "${ASSOCGEN_COMMAND}")
  set_property(GLOBAL PROPERTY _ASSOCGEN_DEPS "")
  unset(_assocgen_rc)
  unset(_assocgen_out)
  unset(_assocgen_err)
  unset(_assocgen_shown)
endif()
if(_assocgen_user_command STREQUAL "")
  # remember the default only once it runs, so that installing the generator later is picked up
  set(ASSOCGEN_COMMAND "${ASSOCGEN_COMMAND}" CACHE STRING
      "assocgen's command line (a list), e.g. /path/to/python3;-m;assocgen")
endif()
unset(_assocgen_checked)
unset(_assocgen_user_command)


# Runs the generator at configure time with ARGN; the output is put in <out_var>.  A failure is
# a FATAL_ERROR with the generator's message (exit 2: a mistake in the spec or the arguments).
function(_assocgen_query out_var target)
  get_property(dir GLOBAL PROPERTY ASSOCGEN_CMAKE_DIR)
  execute_process(COMMAND ${ASSOCGEN_COMMAND} ${ARGN}
                  WORKING_DIRECTORY "${dir}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    # indented lines are printed as they are (CMake would reflow the others)
    string(REGEX REPLACE "\n" "\n  " err "${err}")
    string(REPLACE ";" " " shown "${ASSOCGEN_COMMAND};${ARGN}")
    if(rc EQUAL 2)
      message(FATAL_ERROR "assocgen_add_library(${target}): the generator rejects the spec:\n  ${err}\n")
    else()
      message(FATAL_ERROR "assocgen_add_library(${target}): the generator failed (${rc}):\n  ${err}\n"
                          "Command:\n  ${shown}\n")
    endif()
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()


# Sets <out_var> to 90 when the project did not choose CUDA architectures, else to "" (keep
# CMake's CMAKE_CUDA_ARCHITECTURES).  The kernels need sm_80 or newer, and CMake's default is
# the compiler's (sm_75 for CUDA 13).  Chosen: a normal variable CMAKE_CUDA_ARCHITECTURES (set in
# the project), the CUDAARCHS environment variable, or a cache entry that is not CMake's detected
# default: CMake writes that one with the help string "CUDA architectures"; its value is
# remembered on first sight, so a later -DCMAKE_CUDA_ARCHITECTURES=... counts as chosen.
function(_assocgen_default_architectures out_var)
  set(${out_var} "" PARENT_SCOPE)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(${out_var} 90 PARENT_SCOPE)       # policy CMP0104 OLD: no architectures at all
    return()
  endif()
  if(NOT "$ENV{CUDAARCHS}" STREQUAL "" OR NOT DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES} OR
     NOT "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}")
    return()
  endif()
  set(value "$CACHE{CMAKE_CUDA_ARCHITECTURES}")
  if(DEFINED CMAKE_CUDA_ARCHITECTURES_DEFAULT)            # newer CMake records its default
    set(default "${CMAKE_CUDA_ARCHITECTURES_DEFAULT}")
  elseif(DEFINED CACHE{_ASSOCGEN_CUDA_ARCHITECTURES_DEFAULT})
    set(default "$CACHE{_ASSOCGEN_CUDA_ARCHITECTURES_DEFAULT}")
  else()
    get_property(help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
    set(default "")
    if(help STREQUAL "CUDA architectures")
      set(default "${value}")
    endif()
    set(_ASSOCGEN_CUDA_ARCHITECTURES_DEFAULT "${default}" CACHE INTERNAL
        "CMake's detected CMAKE_CUDA_ARCHITECTURES (empty: the project chose them)")
  endif()
  if(NOT default STREQUAL "" AND value STREQUAL default)
    set(${out_var} 90 PARENT_SCOPE)
  endif()
endfunction()


function(assocgen_add_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "SINGLE_HEADER" "SPEC;PREFIX;OUTPUT_DIR" "")
  set(where "assocgen_add_library(${target})")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${arg_UNPARSED_ARGUMENTS}\n"
                        "Usage: assocgen_add_library(<target> SPEC <file> [PREFIX <prefix>] [SINGLE_HEADER] [OUTPUT_DIR <dir>])")
  endif()
  foreach(key IN ITEMS SPEC PREFIX OUTPUT_DIR)
    if(key IN_LIST arg_KEYWORDS_MISSING_VALUES)
      message(FATAL_ERROR "${where}: ${key} needs a value")
    endif()
  endforeach()
  if(NOT arg_SPEC)
    message(FATAL_ERROR "${where}: give the spec: SPEC <file.toml>")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    message(FATAL_ERROR "${where}: the generated kernels are CUDA: enable the language first "
                        "(project(... LANGUAGES C CUDA), or enable_language(CUDA))")
  endif()
  if(NOT ASSOCGEN_COMMAND)
    message(FATAL_ERROR "${where}: ASSOCGEN_COMMAND is empty: call find_package(assocgen REQUIRED) first")
  endif()

  cmake_path(ABSOLUTE_PATH arg_SPEC BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE OUTPUT_VARIABLE spec)
  if(NOT EXISTS "${spec}" OR IS_DIRECTORY "${spec}")
    message(FATAL_ERROR "${where}: no spec file ${spec}")
  endif()
  if(arg_OUTPUT_DIR)
    cmake_path(ABSOLUTE_PATH arg_OUTPUT_DIR BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}" NORMALIZE
               OUTPUT_VARIABLE out_dir)
  else()
    set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/assocgen/${target}")
  endif()
  string(REGEX REPLACE "/$" "" out_dir "${out_dir}")

  set(args "${spec}" -o "${out_dir}")
  if(arg_PREFIX)
    list(APPEND args --prefix "${arg_PREFIX}")
  endif()
  if(arg_SINGLE_HEADER)
    list(APPEND args --single-header)
  endif()

  # a spec that gains or loses an instance changes the outputs: re-configure on any change to it
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${spec}")

  # the outputs, one path a line
  _assocgen_query(listing "${target}" ${args} --list-files)
  string(REGEX REPLACE "\n+$" "" listing "${listing}")
  string(REPLACE "\n" ";" listing "${listing}")
  set(header "")
  set(sources "")
  set(outputs "")
  foreach(path IN LISTS listing)
    cmake_path(ABSOLUTE_PATH path BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}" NORMALIZE)
    list(APPEND outputs "${path}")
    if(path MATCHES "\\.h$")
      if(header)
        message(FATAL_ERROR "${where}: the generator lists two headers: ${header} and ${path}")
      endif()
      set(header "${path}")
    elseif(path MATCHES "\\.cu$")
      list(APPEND sources "${path}")
    endif()
  endforeach()
  if(NOT header)
    message(FATAL_ERROR "${where}: `assocgen --list-files` names no header (.h) for ${spec}:\n  ${listing}")
  endif()
  cmake_path(GET header PARENT_PATH header_dir)
  cmake_path(GET header STEM prefix)

  # the generator's own files (templates, modules), asked once a configure
  get_property(deps GLOBAL PROPERTY _ASSOCGEN_DEPS)
  if(NOT deps)
    _assocgen_query(deps "${target}" --print-deps)
    string(REGEX REPLACE "\n+$" "" deps "${deps}")
    string(REPLACE "\n" ";" deps "${deps}")
    set_property(GLOBAL PROPERTY _ASSOCGEN_DEPS "${deps}")
  endif()
  # its modules decide which files a spec gives: a change to them re-configures too
  foreach(dep IN LISTS deps)
    if(dep MATCHES "\\.py$")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${dep}")
    endif()
  endforeach()

  get_property(cmake_dir GLOBAL PROPERTY ASSOCGEN_CMAKE_DIR)
  cmake_path(RELATIVE_PATH spec BASE_DIRECTORY "${CMAKE_SOURCE_DIR}" OUTPUT_VARIABLE shown_spec)
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${ASSOCGEN_COMMAND} ${args}
    DEPENDS "${spec}" ${deps}
    WORKING_DIRECTORY "${cmake_dir}"
    COMMENT "assocgen: generating ${target} from ${shown_spec}"
    VERBATIM)

  if(arg_SINGLE_HEADER)
    # the kernels come from the header: one .cu defines <PREFIX>_IMPLEMENTATION and includes it
    # (file(CONFIGURE) writes only when the text changes, so the stub does not rebuild for nothing)
    if(arg_PREFIX)
      set(prefix "${arg_PREFIX}")
    endif()
    string(TOUPPER "${prefix}" macro)
    set(stub "${out_dir}/${prefix}_implementation.cu")
    file(CONFIGURE OUTPUT "${stub}" CONTENT
         "/* written by assocgen_add_library(${target}): the kernels of ${prefix}.h */\n#define ${macro}_IMPLEMENTATION\n#include \"${prefix}.h\"\n"
         @ONLY)
    set_source_files_properties("${stub}" PROPERTIES OBJECT_DEPENDS "${header}")
    set(sources "${stub}")
  endif()
  if(NOT sources)
    message(FATAL_ERROR "${where}: the spec ${spec} gives no kernels (no .cu files)")
  endif()

  add_library(${target} STATIC ${sources} ${header})
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${header_dir}>")
  target_link_libraries(${target} PUBLIC CUDA::cudart)
  set_target_properties(${target} PROPERTIES
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    POSITION_INDEPENDENT_CODE ON
    ASSOCGEN_HEADER "${header}"
    ASSOCGEN_OUTPUT_DIR "${out_dir}"
    ASSOCGEN_PREFIX "${prefix}"
    ASSOCGEN_SPEC "${spec}"
    ASSOCGEN_SOURCES "${sources}")

  _assocgen_default_architectures(arch)
  if(arch)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES ${arch})
  endif()
endfunction()
