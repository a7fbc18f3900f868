"""Training step in its own module, as in many research repositories."""

from apex import amp


def train_step(model, optimizer, batch, loss_fn):
    images, labels = batch
    loss = loss_fn(model(images), labels)
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    return loss.item()
