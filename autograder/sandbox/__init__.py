"""Starting, limiting and watching one child process: bubblewrap or the plain-mode guardian
(``reaper``), the GPU device nodes a child is shown (``gpu_nodes``), the parse check before any
child (``parse_check``), and a grader that cannot be inspected by its children (``nodump``)."""
