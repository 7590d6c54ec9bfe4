"""`dycl-opt`: xDSL's opt driver with dycl's dialects and passes registered."""

from __future__ import annotations

import sys
from typing import IO

from xdsl.xdsl_opt_main import xDSLOptMain

from dycl.diagnostics import capture_failing_ops, report_and_exit
from dycl.parsing import LocatingParser
from dycl.registry import DIALECTS, PASSES


class DyclOptMain(xDSLOptMain):
    version_format = "dycl-opt (xDSL {xdsl_version})"

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for name, factory in DIALECTS.items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in PASSES.items():
            self.register_pass(name, factory)  # ours win over same-named xDSL passes

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]):
            parser = LocatingParser(self.ctx, io.read(), self.get_input_name())
            parser.line_offset = self._chunk_offset
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

    _chunk_offset = 0

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        self._chunk_offset = start_offset  # so --split-input-file locations stay true
        return super().parse_chunk(chunk, file_extension, start_offset)


def main(argv: list[str] | None = None) -> int:
    try:
        with capture_failing_ops():
            DyclOptMain(args=argv).run()
    except Exception as e:  # every user-caused failure ends as a located diagnostic
        report_and_exit(e, prog="dycl-opt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
