"""nbconvert's ExecutePreprocessor for Deno's Jupyter kernel (used by test/e2e/Notebook.test.ts).

Deno's kernel (2.9) sometimes publishes a cell's `execute_result` (or a `display_data` sent while
formatting the cell's value) on IOPub just *after* that cell's `status: idle`. nbclient stops
collecting a cell's outputs at its idle status and drops messages whose parent is an earlier
cell, so such an output is lost at random (about one run in three, more under load). This
preprocessor keeps reading the cell's messages until IOPub has been quiet for `grace` seconds.

    jupyter nbconvert --to notebook \
      --NotebookExporter.preprocessors='["deno_execute.DenoExecutePreprocessor"]' \
      --DenoExecutePreprocessor.enabled=True --DenoExecutePreprocessor.kernel_name=deno ...
"""
import queue

from nbclient.exceptions import CellExecutionComplete
from nbclient.util import ensure_async
from nbconvert.preprocessors import ExecutePreprocessor
from traitlets import Float


class DenoExecutePreprocessor(ExecutePreprocessor):
    grace = Float(0.5, help="Seconds of IOPub silence after a cell's idle status before the next cell runs").tag(config=True)

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        await super()._async_poll_output_msg(parent_msg_id, cell, cell_index)
        while True:
            try:
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=self.grace))
            except queue.Empty:
                return
            if msg["parent_header"].get("msg_id") == parent_msg_id:
                try:
                    self.process_message(msg, cell, cell_index)
                except CellExecutionComplete:
                    pass
