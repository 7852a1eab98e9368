def run():
    # TODO(ana): retry on timeout
    pass  # FIXME: handle empty queue

# just a comment
