"""`dycl-opt`: xDSL's opt driver with dycl's dialects and passes registered."""

from __future__ import annotations

import argparse
import dataclasses
import io
import sys
from typing import IO

from xdsl.utils.exceptions import ParseError

from xdsl.xdsl_opt_main import xDSLOptMain

from dycl.diagnostics import capture_failing_ops, report_and_exit
from dycl.models import trust_model_spec
from dycl.parsing import LocatingParser
from dycl.pass_info import format_pass_list
from dycl.pass_specs import check_pipeline
from dycl.registry import BUILTIN_PASSES, DIALECTS, PASSES, TARGETS
from dycl.verify_diagnostics import run_chunk


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

    def register_all_targets(self) -> None:
        super().register_all_targets()
        for name, factory in TARGETS.items():
            self.available_targets[name] = factory

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]):
            parser = LocatingParser(self.ctx, io.read(), self.get_input_name())
            parser.line_offset = self._chunk_offset
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--model", metavar="FILE.py:FACTORY", action="append", default=[],
            help="the model passes may import for weights (dycl-opt never imports a file that is only named "
                 "in the IR's dycl.model attribute)")
        arg_parser.add_argument(
            "--list-passes", action="store_true",
            help="list dycl's passes with their options, then xDSL's, and exit")

    def setup_pipeline(self) -> None:
        for spec in self.args.model:
            trust_model_spec(spec)
        if self.args.passes:
            check_pipeline(self.args.passes, self.available_passes)
        super().setup_pipeline()

    def run(self) -> None:
        if self.args.list_passes:  # before reading the input: it needs none
            sys.stdout.write(format_pass_list(self.available_passes, first=list(BUILTIN_PASSES)))
            return
        if not self.args.verify_diagnostics:
            return super().run()
        # MLIR's form: expectations written in the input are matched, and required.
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        problems: list[str] = []
        file = self.get_input_name()
        for i, (chunk, offset) in enumerate(chunks):
            data = chunk.read()
            text = data.decode() if isinstance(data, bytes) else data

            def process(data=data, offset=offset):
                try:
                    module = self.parse_chunk(io.BytesIO(data if isinstance(data, bytes) else data.encode()),
                                              file_extension, offset)
                except ParseError as e:
                    e.span = dataclasses.replace(e.span, line_offset=offset)
                    raise
                if module is not None:
                    self.apply_passes(module)
                return module

            module, chunk_problems = run_chunk(text, offset + 1, file, process)
            problems += chunk_problems
            if module is not None:
                if i > 0:
                    output.write("// -----\n")
                output.write(self.output_resulting_program(module))
        if output is not sys.stdout:
            output.close()
        if problems:
            print("\n".join(problems), file=sys.stderr)
            sys.exit(1)

    _chunk_offset = 0

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        self._chunk_offset = start_offset  # so --split-input-file locations stay true
        return super().parse_chunk(chunk, file_extension, start_offset)


def main(argv: list[str] | None = None, driver: type[DyclOptMain] | None = None) -> int:
    """`driver`: a `DyclOptMain` subclass registering more passes (docs/writing-a-pass.md)."""
    try:
        with capture_failing_ops():
            (driver or DyclOptMain)(args=argv).run()
    except Exception as e:  # every user-caused failure ends as a located diagnostic
        report_and_exit(e, prog="dycl-opt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
