#!/usr/bin/env bash
# Makes the graph and kernel machinery `package`, so `import Tessera` exports only the API.
#
#   tools/package-access.sh
#
# A one-off, mechanical rewrite for the lead to run after merging the branches that restructure
# Sources/TesseraGraph (it is not applied on the branch that wrote it, to avoid conflicts):
#
# 1. Sources/TesseraGraph and Sources/_TesseraTestSupport (whose public helpers take kernel types):
#    every `public` declaration modifier becomes `package`.
# 2. Sources/TesseraKernels: the declarations that stayed `public` only because TesseraGraph's
#    public declarations used them (UnaryOp, BinaryOp, ReductionOp, Conv2DParameters,
#    Pool2DParameters, ResizeKernelMethod, AlignedBuffer, StridedLayout, CollapsedLayouts) become
#    `@usableFromInline package`: `@inlinable` kernel code reads them, and `@inlinable` code may
#    only use `public` or `@usableFromInline` declarations. `@inlinable` members just become
#    `package` (`@inlinable` implies `@usableFromInline`).
#    KernelScalar and KernelScalarType (Support/KernelScalarType.swift) stay public while
#    TesseraTensor's public MLTensorScalar and MLShapedArrayScalar refine KernelScalar.
#
# Then: build, fix what the compiler names (public TesseraTensor/TesseraModels declarations that
# use a graph type, such as `MLTensor.materialize(_:)` returning `PlanStatistics`), and run
# `make api-list` to drop the lines that are gone from tools/public-api-pending.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

# `public` as a declaration modifier: at the start of a line (after indentation and attributes
# such as `@inlinable` or `@discardableResult`), followed by a space.
modifier='^(([[:space:]]*@[A-Za-z_]+(\([^)]*\))?)*[[:space:]]*)public '

find Sources/TesseraGraph Sources/_TesseraTestSupport -name '*.swift' -print0 |
    xargs -0 sed -i -E "s/${modifier}/\\1package /"

kernel_files=(
    Sources/TesseraKernels/Convolution/Conv2DParameters.swift
    Sources/TesseraKernels/Convolution/Pool2DParameters.swift
    Sources/TesseraKernels/Elementwise/ElementwiseOp.swift
    Sources/TesseraKernels/Memory/AlignedBuffer.swift
    Sources/TesseraKernels/Reduction/ReductionKernels.swift
    Sources/TesseraKernels/Resize/ResizeKernels.swift
    Sources/TesseraKernels/Support/StridedLayout.swift
)
for file in "${kernel_files[@]}"; do
    # `@inlinable public` (the attribute may sit on the line above) → `@inlinable package`;
    # any other `public` → `@usableFromInline package`.
    perl -0777 -pi -e '
        s/(\@inlinable(?:[ \t]+\@\w+(?:\([^)]*\))?)*\s+)public /${1}package /g;
        s/^((?:[ \t]*\@\w+(?:\([^)]*\))?)*[ \t]*)public /${1}\@usableFromInline package /mg;
    ' "$file"
done

# Longer modifiers can push a line past the formatter's limit.
swift-format format --in-place --recursive Sources/TesseraGraph Sources/_TesseraTestSupport "${kernel_files[@]}"

echo "Remaining public declarations in the machinery modules:"
grep -rnE "${modifier}" Sources/TesseraGraph Sources/TesseraKernels Sources/TesseraProtobuf Sources/_TesseraTestSupport ||
    echo "  (none)"
