"""File transfers from an untrusted sender: the reader takes only a regular file inside the job
folder, never through a link, never a FIFO or a device (either would block or never end)."""

import os
import tempfile
import unittest

from dicebench_harness import transfer


class PlainFileTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="dicebench-transfer-")
        self.outside = tempfile.mkdtemp(prefix="dicebench-outside-")
        with open(os.path.join(self.outside, "secret"), "wb") as f:
            f.write(b"secret")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.folder, ignore_errors=True)
        shutil.rmtree(self.outside, ignore_errors=True)

    def refused(self, path, why):
        with self.assertRaises(transfer.TransferError) as caught:
            transfer.import_tree({"transport": "file", "path": path}, "cpu", clone=True, folder=self.folder)
        self.assertIn(why, str(caught.exception))

    def test_a_path_outside_the_job_folder_is_refused(self):
        self.refused(os.path.join(self.outside, "secret"), "not in the job folder")
        self.refused(os.path.join(self.folder, "..", os.path.basename(self.outside), "secret"), "not in the job folder")

    def test_links_fifos_and_devices_are_refused(self):
        link = os.path.join(self.folder, "outputs-0.pt")
        os.symlink(os.path.join(self.folder, "inside.pt"), link)
        with open(os.path.join(self.folder, "inside.pt"), "wb") as f:
            f.write(b"x")
        self.refused(link, "cannot open")
        fifo = os.path.join(self.folder, "outputs-1.pt")
        os.mkfifo(fifo)
        self.refused(fifo, "not a regular file")  # returns at once: opening does not wait for a writer
        self.refused("/dev/zero", "not in the job folder")

    def test_a_regular_file_that_is_not_plain_tensors_is_refused_by_torch(self):
        path = os.path.join(self.folder, "outputs-2.pt")
        with open(path, "wb") as f:
            f.write(b"not a torch file")
        self.refused(path, "not plain tensors")


if __name__ == "__main__":
    unittest.main()
