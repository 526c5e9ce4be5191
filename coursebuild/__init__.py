"""coursebuild: the course-building tools (sync, release, samples, leak scan, claims, syllabus,
module scaffolds, the authoring check) and the templates they write from.

Beside the grader (``autograder``) and the gradebook (``gradebook``): it imports ``coursekit``
and third-party packages only.
"""
