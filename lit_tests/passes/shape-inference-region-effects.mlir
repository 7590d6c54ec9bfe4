// RUN: dycl import %S/inputs/region_effects.py:make --input 4x4xf32 | dycl-opt -p 'shape-inference{model="%S/inputs/region_effects.py:make"}' | filecheck %s

// shape-inference runs each fallback region on stand-ins (also those whose results
// no compiled code reads) and notes what it changes that the caller sees: nothing,
// module attributes ("path:name", the root's path is empty) that the host can save
// and put back, or "*" for anything else (here: printing). A region's result that
// the code after it was not compiled for then runs the call again as eager Python
// only where nothing before it is "*".
// CHECK-LABEL: func.func @forward
// CHECK:         dycl.py_region(%x) {dycl.region_effects = [], code = "{{.*}}a.append(expert(chunk))
// CHECK:         dycl.py_region({{.*}}) {dycl.region_effects = [":log"], code = "{{.*}}self.log.append(chunk.shape[0])
// CHECK:         dycl.py_region({{.*}}) {dycl.region_effects = ["*"], code = "{{.*}}print(chunk.shape)
