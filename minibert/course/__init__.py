"""The course machinery, apart from the model library: where files live, the checkpoint zoo.

`minibert.course.paths` knows the repository's layout; `minibert.course.zoo` holds the one
recipe under which every pretrained model of the course is trained (`make zoo`) and loads its
checkpoints for the lessons.
"""
