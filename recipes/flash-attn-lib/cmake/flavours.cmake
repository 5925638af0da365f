# What each flavour of source compiles: its kernel files (by name: forward or backward, variant,
# head dim, dtype, causal, arch), its version, include directories and nvcc flags, as that
# source's own setup.py has them. The flavour is FLASH_ATTN_FLAVOUR (fabuild passes it from the
# cell's package), never guessed from the tree: a FlashAttention clone holds both hopper/ and
# csrc/flash_attn. flash_attn_select_kernels() sets, in the caller's scope: flavour, kernels,
# backend_sources, extra_sources, includes, nvcc_flags, definitions, has_sm90, has_sm8x, version,
# numeric_version, build_info and licenses (NAME=PATH).

set(flash_attn_shim_dir "${CMAKE_CURRENT_LIST_DIR}/../shim")

# The flavour of the tree at `src`, and what it needs.
macro(flash_attn_flavour)
  set(extra_sources "")
  set(always_off "")
  set(licenses "")
  set(flavour "${FLASH_ATTN_FLAVOUR}")
  set(markers "fa3=hopper/flash.h" "fa2=csrc/flash_attn/src/flash.h" "example=csrc/flash_example/src/flash.h")
  set(marker "")
  foreach(pair IN LISTS markers)
    string(REGEX REPLACE "=.*" "" name "${pair}")
    if(name STREQUAL flavour)
      string(REGEX REPLACE "^[^=]*=" "" marker "${pair}")
    endif()
  endforeach()
  if(NOT marker)
    message(FATAL_ERROR "FLASH_ATTN_FLAVOUR is '${flavour}': pass -DFLASH_ATTN_FLAVOUR=fa3 (FlashAttention 3, hopper/), "
                        "fa2 (FlashAttention 2, csrc/flash_attn) or example (the bundled example)")
  elseif(NOT EXISTS "${src}/${marker}")
    message(FATAL_ERROR "FLASH_ATTN_FLAVOUR ${flavour} builds ${marker}, which ${src} does not have: "
                        "pass the source tree of that flavour, or the flavour of this tree")
  endif()
  set(backend_sources "src/backend_${flavour}.cpp")
  # Kernel files by name. The groups: 1 fwd or bwd, 2 FlashAttention 2's split_ or split_align_,
  # 3 head dim, 4 dtype, 5 _paged, 6 _split, 7 _causal, 8 arch (a flavour's regex leaves a group
  # it lacks empty, so that the matches are numbered alike).
  if(flavour STREQUAL "fa3")
    set(kernel_dir "${src}/hopper/instantiations")
    # Plain, paged, split and paged-split forward files and the backward files; not the softcap,
    # packgqa or sm100 ones (the C API uses none of them).
    set(kernel_regex "^flash_(fwd|bwd)_()hdim(64|96|128|192|256)_(fp16|bf16|e4m3)(_paged)?(_split)?()_sm(80|90)\\.cu$")
    set(version_file "${src}/hopper/__init__.py")
    set(includes "${src}/hopper" "${src}/csrc/cutlass/include")
    # hopper/setup.py's flags, and those torch's extension builder adds to every nvcc compile.
    set(nvcc_flags -O3 --use_fast_math -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -DCUTLASS_ENABLE_GDC_FOR_SM90
                   -DCUTLASS_DEBUG_TRACE_LEVEL=0 -DNDEBUG -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__
                   -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr)
    # The varlen scheduler's preparation kernel (prepare_varlen_num_blocks).
    set(extra_sources "${src}/hopper/flash_prepare_scheduler.cu")
    # CUDA 13 keeps CCCL (cub, libcu++) under include/cccl; hopper/setup.py adds it for the host
    # compiler, which compiles the C++ backend here.
    foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
      if(IS_DIRECTORY "${dir}/cccl")
        list(APPEND includes "${dir}/cccl")
      endif()
    endforeach()
    if(NOT EXISTS "${src}/csrc/cutlass/include/cutlass/cutlass.h")
      message(FATAL_ERROR "${src}/csrc/cutlass is empty: clone FlashAttention with --recursive "
                          "(or run git submodule update --init csrc/cutlass)")
    endif()
  elseif(flavour STREQUAL "fa2")
    set(kernel_dir "${src}/csrc/flash_attn/src")
    # Forward, split-KV forward (which the paged cache runs on; _align_ where the source has it) and
    # backward files.
    set(kernel_regex "^flash_(fwd|bwd)_(split_|split_align_)?hdim(32|64|96|128|192|256)_(fp16|bf16)()()(_causal)?_sm(80)\\.cu$")
    set(version_file "${src}/flash_attn/__init__.py")
    set(includes "${src}/csrc/flash_attn" "${src}/csrc/flash_attn/src" "${src}/csrc/cutlass/include"
                 "${flash_attn_shim_dir}")
    set(nvcc_flags -O3 --use_fast_math -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__
                   -U__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr
                   --expt-extended-lambda)
    # The C API asks for none of these (no dropout, ALiBi, softcap or sliding window): each kernel
    # file compiles a quarter of its variants or fewer without them.
    set(always_off DROPOUT ALIBI SOFTCAP LOCAL)
    if(NOT EXISTS "${src}/csrc/cutlass/include/cutlass/cutlass.h")
      message(FATAL_ERROR "${src}/csrc/cutlass is empty: use FlashAttention's PyPI sdist or a recursive clone")
    endif()
  else()
    set(kernel_dir "${src}/csrc/flash_example/src")
    set(kernel_regex "^flash_(fwd)_()hdim(32|64|96|128)_(fp16|bf16)()()(_causal)?_sm(80)\\.cu$")
    set(version_file "${src}/flash_example/__init__.py")
    set(includes "${src}/csrc/flash_example/src" "${flash_attn_shim_dir}")
    set(nvcc_flags -O3 --use_fast_math -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__
                   -U__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr
                   --expt-extended-lambda)
  endif()
  foreach(pair "flash-attention-LICENSE=${src}/LICENSE" "cutlass-LICENSE.txt=${src}/csrc/cutlass/LICENSE.txt")
    string(REGEX REPLACE "^[^=]*=" "" path "${pair}")
    if(EXISTS "${path}")
      list(APPEND licenses "${pair}")
    endif()
  endforeach()
endmacro()

# `version` from the source's __version__, and its leading numbers for CMake ("3.0.0b1" -> 3.0.0).
macro(flash_attn_version)
  set(version 0)
  if(EXISTS "${version_file}")
    file(STRINGS "${version_file}" version_line REGEX "^__version__ *= *")
    string(REGEX REPLACE "^__version__ *= *[\"']([^\"']+)[\"'].*" "\\1" version "${version_line}")
  endif()
  string(REGEX MATCH "^[0-9]+(\\.[0-9]+)*" numeric_version "${version}")
  if(NOT numeric_version)
    set(numeric_version 0)
  endif()
endmacro()

macro(flash_attn_select_kernels)
  flash_attn_flavour()
  flash_attn_version()
  set(off ${FLASH_ATTN_DISABLE} ${always_off})
  list(REMOVE_DUPLICATES off)
  if("VARLEN" IN_LIST off)
    message(FATAL_ERROR "FLASH_ATTN_DISABLE has VARLEN: the C API's one entry point is the varlen forward pass; "
                        "leave VARLEN on")
  endif()
  # The switches as compile definitions, spelled as the source's macros (SM80's is ..._SM8x).
  set(definitions "")
  foreach(switch IN LISTS off)
    if(switch STREQUAL "SM80")
      list(APPEND definitions "FLASHATTENTION_DISABLE_SM8x")
    else()
      list(APPEND definitions "FLASHATTENTION_DISABLE_${switch}")
    endif()
  endforeach()

  # -gencode flags. FlashAttention 3 has kernels for sm_90a and, unless SM80 is off, for sm_80
  # (which serve sm_86 and sm_89 too); the others compile every kernel for every arch.
  set(has_sm8x OFF)
  set(has_sm90 OFF)
  set(sm8x_gencode "")
  set(all_gencode "")
  foreach(arch IN LISTS FLASH_ATTN_ARCHS)
    if(NOT arch MATCHES "^[0-9]+$")
      message(FATAL_ERROR "FLASH_ATTN_ARCHS: '${arch}' is not a compute capability (e.g. 80, 90)")
    elseif(flavour STREQUAL "fa3" AND arch STREQUAL "90")
      set(has_sm90 ON)
      list(APPEND all_gencode "-gencode=arch=compute_90a,code=sm_90a")
    elseif(flavour STREQUAL "fa3" AND arch MATCHES "^8[0-9]$")
      if(NOT "SM80" IN_LIST off AND NOT has_sm8x)
        set(has_sm8x ON)
        set(sm8x_gencode "-gencode=arch=compute_80,code=sm_80")
        list(APPEND all_gencode "${sm8x_gencode}")
      endif()
    elseif(flavour STREQUAL "fa3")
      message(WARNING "FlashAttention 3's forward kernels are for sm_80 to sm_89 and sm_90; arch ${arch} is left out")
    elseif(arch LESS 80)
      message(FATAL_ERROR "FlashAttention's kernels need compute capability 8.0 or newer, not ${arch}")
    else()
      list(APPEND all_gencode "-gencode=arch=compute_${arch},code=sm_${arch}")
    endif()
  endforeach()
  if(NOT all_gencode)
    message(FATAL_ERROR "no architecture in FLASH_ATTN_ARCHS (${FLASH_ATTN_ARCHS}) has kernels in this ${flavour} build")
  endif()

  # What the variants need beside their kernel files: FlashAttention 3's combine kernel (split),
  # the backward backends, FlashAttention 2's sum of grouped heads' dK and dV (backward), and the
  # LSE fix-up of rows without keys.
  if(flavour STREQUAL "fa3" AND NOT "SPLIT" IN_LIST off)
    list(APPEND extra_sources "${src}/hopper/flash_fwd_combine.cu")
  endif()
  if(NOT flavour STREQUAL "example" AND NOT "BACKWARD" IN_LIST off)
    list(APPEND backend_sources "src/backend_${flavour}_bwd.cpp")
  endif()
  if(flavour STREQUAL "fa2" AND NOT "BACKWARD" IN_LIST off)
    list(APPEND extra_sources "${CMAKE_CURRENT_SOURCE_DIR}/src/head_groups.cu")
  endif()
  # FlashAttention 2's and the example's kernels write +INFINITY as the LSE of a row without keys,
  # which the C API gives as -INFINITY (src/lse_rows.cu).
  if(NOT flavour STREQUAL "fa3")
    list(APPEND extra_sources "${CMAKE_CURRENT_SOURCE_DIR}/src/lse_rows.cu")
  endif()
  file(GLOB candidates RELATIVE "${kernel_dir}" "${kernel_dir}/flash_fwd_*.cu" "${kernel_dir}/flash_bwd_*.cu")
  list(SORT candidates)
  set(kernels "")
  set(head_dims "")
  set(dtypes "")
  foreach(file IN LISTS candidates)
    if(NOT file MATCHES "${kernel_regex}")
      continue()
    endif()
    set(pass "${CMAKE_MATCH_1}")
    set(fa2_split "${CMAKE_MATCH_2}")
    set(hdim "${CMAKE_MATCH_3}")
    set(dtype "${CMAKE_MATCH_4}")
    set(paged "${CMAKE_MATCH_5}")
    set(split "${CMAKE_MATCH_6}")
    set(causal "${CMAKE_MATCH_7}")
    set(arch "${CMAKE_MATCH_8}")
    # The variant's switch: FlashAttention 3's paged and split files, FlashAttention 2's split
    # files (its paged cache runs on them; its varlen forward pass has no split-KV), backward files.
    if("HDIM${hdim}" IN_LIST off
       OR (dtype STREQUAL "fp16" AND "FP16" IN_LIST off)
       OR (dtype STREQUAL "e4m3" AND "FP8" IN_LIST off)
       OR (causal AND "CAUSAL" IN_LIST off)
       OR (pass STREQUAL "bwd" AND "BACKWARD" IN_LIST off)
       OR (paged AND "PAGEDKV" IN_LIST off)
       OR (split AND "SPLIT" IN_LIST off)
       OR (fa2_split AND "PAGEDKV" IN_LIST off)
       OR (flavour STREQUAL "fa3" AND arch STREQUAL "90" AND NOT has_sm90)
       OR (flavour STREQUAL "fa3" AND arch STREQUAL "80" AND NOT has_sm8x))
      continue()
    endif()
    set(path "${kernel_dir}/${file}")
    list(APPEND kernels "${path}")
    list(APPEND head_dims "${hdim}")
    list(APPEND dtypes "${dtype}")
    # As hopper/setup.py compiles them: _sm90 files for sm_90a only, _sm80 files for sm_80 only.
    if(flavour STREQUAL "fa3" AND arch STREQUAL "90")
      set_source_files_properties("${path}" PROPERTIES COMPILE_OPTIONS "-gencode=arch=compute_90a,code=sm_90a")
    elseif(flavour STREQUAL "fa3")
      set_source_files_properties("${path}" PROPERTIES COMPILE_OPTIONS "${sm8x_gencode}")
    else()
      set_source_files_properties("${path}" PROPERTIES COMPILE_OPTIONS "${all_gencode}")
    endif()
  endforeach()
  if(NOT kernels)
    message(FATAL_ERROR "no kernel of ${kernel_dir} is left by FLASH_ATTN_DISABLE (${FLASH_ATTN_DISABLE}) "
                        "for FLASH_ATTN_ARCHS (${FLASH_ATTN_ARCHS})")
  endif()
  foreach(file IN LISTS extra_sources)
    set_source_files_properties("${file}" PROPERTIES COMPILE_OPTIONS "${all_gencode}")
  endforeach()

  list(REMOVE_DUPLICATES head_dims)
  list(SORT head_dims COMPARE NATURAL)
  list(REMOVE_DUPLICATES dtypes)
  list(LENGTH kernels kernel_count)
  string(REPLACE ";" " " info_archs "${FLASH_ATTN_ARCHS}")
  string(REPLACE ";" " " info_dims "${head_dims}")
  string(REPLACE ";" " " info_dtypes "${dtypes}")
  # The variants beyond the plain forward pass that this build has (the backends' capabilities()).
  set(variants "")
  if(NOT flavour STREQUAL "example" AND NOT "PAGEDKV" IN_LIST off)
    list(APPEND variants paged)
  endif()
  if(flavour STREQUAL "fa3" AND NOT "SPLIT" IN_LIST off)
    list(APPEND variants split)
  endif()
  if(NOT flavour STREQUAL "example" AND NOT "BACKWARD" IN_LIST off)
    list(APPEND variants backward)
  endif()
  string(REPLACE ";" " " info_variants "${variants}")
  if(NOT variants)
    set(info_variants "forward only")
  endif()
  set(build_info "${flavour} ${version}, archs ${info_archs}, head dims ${info_dims}, ${info_dtypes}, ${info_variants}, profile ${FLASH_ATTN_PROFILE}")
  message(STATUS "flash_attn: ${build_info}; ${kernel_count} kernel files")
endmacro()
