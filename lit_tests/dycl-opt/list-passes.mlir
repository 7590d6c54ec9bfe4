// RUN: dycl-opt --list-passes | filecheck %s
// RUN: not dycl-opt %s -p 'unroll-loops{max-trip=2}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not dycl-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS

// dycl's passes first, in pipeline order, each with its options; then xDSL's.
// CHECK:      dycl passes:
// CHECK-NEXT:   inline-calls {{ +}}Inlines `func.call`s of functions defined in the same module.
// CHECK-NEXT:       remove-dead-callees: bool = true
// CHECK-NEXT:       strict: bool = false
// CHECK-NEXT:   unroll-loops {{ +}}Fully unrolls every `dycl.for` whose lb/ub/step are constants.
// CHECK-NEXT:       max-trip-count: int = 4096
// CHECK:        shape-inference {{ +}}Infers a static type for every value of every function.
// CHECK-NEXT:       model: str | None
// CHECK:        dycl-default {{ +}}The full dycl pipeline
// CHECK:      {{^$}}
// CHECK-NEXT: xDSL passes:
// CHECK:        canonicalize {{ +}}Applies all canonicalization patterns.
// CHECK-NOT:    unroll-loops

// OPTION: dycl-opt: error: unknown option 'max-trip' for pass 'unroll-loops' (available: max-trip-count); did you mean 'max-trip-count'?
// PASS: dycl-opt: error: unknown pass 'no-such-pass' (dycl-opt --list-passes lists them)
