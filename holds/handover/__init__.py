"""Handing a hold over: assigning it to a person or a group (``assignments``) and the notes reviewers leave on it
(``notes``). Both tell the people concerned through ``notifications.notify``, in the change's transaction."""
