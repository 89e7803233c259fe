"""The y2038 rollover sandbox, host side. One package per pipeline stage,
each importing only the stages before it (docs/architecture.md):

    base -> scenario -> build -> guest -> run -> judge -> report -> kunit -> app
"""
